// The CPU matmul alone at the 85M model's prefill shapes (docs/bench/README.md): GFLOP/s per SIMD
// path, with the weights in cache (one matrix, timed again and again) and from memory (48 different
// matrices of 768 x 2048, 302 MB, each read once per pass). Not part of the build; from a build
// dir of scripts/test.sh:
//   g++ -O2 -std=c++20 -I. docs/bench/matmul_prefill.cpp build/kernels/libkvscope_kernels.a
//       -Wl,--start-group build/core/*/libkvscope_core_*.a -Wl,--end-group -lpthread
//       -o /tmp/matmul_prefill    (one line)
//   /tmp/matmul_prefill 128
// Compare with the FMA peak `kvscope-cli bench --limits` measures (16-float vectors for avx512,
// 8-float for avx2 and sse). The median of 7 runs (hot) or 5 passes (cold).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/cpu/isa_kernels.h"

using namespace kvs::cpu;

namespace {

double seconds_of(const std::vector<double>& runs) {
    std::vector<double> v = runs;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::vector<float> random_floats(std::size_t n) {
    std::vector<float> v(n);
    for (float& f : v) f = float(std::rand()) / float(RAND_MAX) - 0.5f;
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    const int T = argc > 1 ? std::atoi(argv[1]) : 128;
    if (T < 1) return 2;
    struct Shape {
        int n, d;
    };
    for (Isa isa : {Isa::avx512, Isa::avx2, Isa::sse}) {
        const Kernels* k = kernels_for(isa);
        if (!k) continue;
        for (const Shape s : {Shape{768, 768}, Shape{768, 2048}, Shape{2048, 768}}) {
            const auto x = random_floats(std::size_t(T) * s.n);
            const auto w = random_floats(std::size_t(s.d) * s.n);
            std::vector<float> out(std::size_t(T) * s.d);
            std::vector<double> runs;
            for (int r = 0; r < 7; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                k->matmul(out.data(), x.data(), w.data(), T, s.n, s.d, nullptr);
                runs.push_back(
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
            const double t = seconds_of(runs);
            std::printf("%-7s hot   T %d  %4d -> %4d: %7.2f ms %6.1f GFLOP/s\n", isa_name(isa), T,
                        s.n, s.d, t * 1e3, 2.0 * T * s.n * s.d / t / 1e9);
        }
    }
    const int n = 768, d = 2048, M = 48;
    const Kernels* k = &active_kernels();
    const auto x = random_floats(std::size_t(T) * n);
    std::vector<std::vector<float>> ws;
    for (int m = 0; m < M; ++m) ws.push_back(random_floats(std::size_t(n) * d));
    std::vector<float> out(std::size_t(T) * d);
    std::vector<double> runs;
    for (int r = 0; r < 5; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (const auto& w : ws) k->matmul(out.data(), x.data(), w.data(), T, n, d, nullptr);
        runs.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double t = seconds_of(runs);
    std::printf("%-7s cold  T %d  %d x (%d -> %d): %7.2f ms %6.1f GFLOP/s\n", isa_name(k->isa), T,
                M, n, d, t * 1e3, 2.0 * T * n * d * M / t / 1e9);
}
