// The matmuls of one decode step on quantised weights, alone: one token through the 85M model's
// matrices (dim 768, hidden 2048, 12 layers, each layer's distinct, then the 512-row
// classifier; 84 + 1 calls), the weights in TYPE (kvscope's quantiser, core/loaders/gguf_writer.h),
// timed as a whole step: the median of STEPS steps, per dot-product path (kernels/cpu/
// quant_dot.h), with the bytes of weights read and the GB/s they make. One thread. Not part of
// the build; from a build dir (one line):
//   g++ -O2 -std=c++20 -I. docs/bench/quant_matmul_step.cpp build/kernels/libkvscope_kernels.a
//       build/core/libkvscope_core.a -lpthread -o /tmp/quant_matmul_step
//   /tmp/quant_matmul_step q4_k [STEPS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/loaders/gguf_writer.h"
#include "kernels/cpu/fast_ops.h"
#include "kernels/cpu/quant_dot.h"

using namespace kvs;

// The bytes' sum as 64-bit words, 512 bits at a time where the CPU has them.
#if defined(__x86_64__)
__attribute__((target("avx512f")))
#endif
std::uint64_t
read_sum(const unsigned char* p, std::size_t n) {
    std::uint64_t s[8] = {};
    for (std::size_t i = 0; i + 64 <= n; i += 64)
        for (int k = 0; k < 8; ++k) {
            std::uint64_t v;
            std::memcpy(&v, p + i + 8 * k, 8);
            s[k] += v;
        }
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

int main(int argc, char** argv) {
    const GgmlType type = ggml_type_from_name(argc > 1 ? argv[1] : "q4_k");
    const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
    const int d = 768, h = 2048, L = 12, V = 512;
    struct Shape {
        int n, rows;
    };
    std::vector<Shape> shapes;
    for (int l = 0; l < L; ++l)
        for (Shape s : {Shape{d, d}, Shape{d, d}, Shape{d, d}, Shape{d, d}, Shape{d, h},
                        Shape{d, h}, Shape{h, d}})
            shapes.push_back(s);
    shapes.push_back({d, V});
    std::vector<std::vector<unsigned char>> mats;
    std::uint64_t bytes = 0;
    unsigned seed = 1;
    for (const Shape& s : shapes) {
        std::vector<float> w(std::size_t(s.rows) * s.n);
        for (float& x : w)
            x = float(int((seed = seed * 1103515245u + 12345u) >> 9) % 2001 - 1000) * 1e-4f;
        auto& m = mats.emplace_back(ggml_row_bytes(type, w.size()));
        encode_values(type, w.data(), w.size(), m.data());
        bytes += m.size();
    }
    std::vector<float> x(h, 0.5f), out(h);
    for (int i = 0; i < h; ++i) x[i] = float((i * 37) % 101 - 50) / 50.0f;
    std::printf("%s, %zu matrices, %.1f MB of weights a step; median of %d steps, 1 thread\n",
                ggml_type_name(type), mats.size(), bytes / 1e6, steps);
    {  // the same bytes only read (summed as 64-bit words): the ceiling a step can reach
        std::vector<double> t;
        std::uint64_t sink = 0;
        for (int s = 0; s < steps; ++s) {
            const auto t0 = std::chrono::steady_clock::now();
            for (const auto& m : mats) sink += read_sum(m.data(), m.size());
            t.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(t.begin(), t.end());
        const double med = t[t.size() / 2];
        std::printf("  %-10s  step %.3f ms (min %.3f)  %.1f GB/s (best %.1f)%s\n", "read only",
                    med * 1e3, t.front() * 1e3, bytes / med / 1e9, bytes / t.front() / 1e9,
                    sink == 1 ? " " : "");
    }
    for (cpu::DotPath p : cpu::available_dot_paths()) {
        const cpu::QuantMatmul mm = cpu::quant_matmul_for(p);
        if (p != cpu::DotPath::float32 && (!mm || !cpu::integer_dot_reads(type))) continue;
        std::vector<double> t;
        for (int s = 0; s < steps; ++s) {
            const auto t0 = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < mats.size(); ++i) {
                if (mm)
                    mm(out.data(), x.data(), type, mats[i].data(), 1, shapes[i].n, shapes[i].rows,
                       nullptr);
                else
                    cpu::matmul_compact(out.data(), x.data(), type, mats[i].data(), 1, shapes[i].n,
                                        shapes[i].rows, nullptr);
            }
            t.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            if (p == cpu::DotPath::float32 && s >= 9) break;  // slow: ten steps tell
        }
        std::sort(t.begin(), t.end());
        const double med = t[t.size() / 2];
        std::printf("  %-10s  step %.3f ms (min %.3f)  %.1f GB/s (best %.1f)  %.0f steps/s\n",
                    cpu::dot_path_name(p), med * 1e3, t.front() * 1e3, bytes / med / 1e9,
                    bytes / t.front() / 1e9, 1 / med);
    }
    return 0;
}
