// The CPU matmuls of one cached decode step, alone: T tokens (default 1; 8: a serve step of
// eight requests) through every layer's matrices, each layer's distinct as in the model, timed as
// a whole step (median of 2000 steps); then a layer's shapes one at a time with the matrix in L1
// (median of 7 runs of 20,000 calls). stories260K (dim 64, hidden 172, 5 layers, kv_dim 32,
// vocab 512: 36 calls, 1.04 MB, more than this guest's L2) or the default model (dim 128, hidden
// 344, 4 layers, kv_dim 32, vocab 1712: 29 calls, 3.65 MB). Not part of the build; from a build dir
// of scripts/test.sh (one line):
//   g++ -O2 -std=c++20 -I. docs/bench/matmul_decode_step.cpp build/kernels/libkvscope_kernels.a
//       -Wl,--start-group build/core/*/libkvscope_core_*.a -Wl,--end-group -lpthread
//       -o /tmp/matmul_decode_step
//   /tmp/matmul_decode_step [avx512|avx2|sse] [stories260K|default] [T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cpu/isa_kernels.h"

using namespace kvs::cpu;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const std::string want = argc > 1 ? argv[1] : "avx512";
    const Kernels* k = nullptr;
    for (Isa isa : {Isa::avx512, Isa::avx2, Isa::sse})
        if (want == isa_name(isa)) k = kernels_for(isa);
    if (!k) {
        std::fprintf(stderr, "no path %s on this CPU\n", want.c_str());
        return 2;
    }
    struct Shape {
        int n, d;
        const char* name;
    };
    const bool tiny = argc > 2 && std::string(argv[2]) == "default";
    const int dim = tiny ? 128 : 64, hidden = tiny ? 344 : 172, layers = tiny ? 4 : 5;
    const int kv_dim = 32, vocab = tiny ? 1712 : 512;
    const int T = argc > 3 ? std::atoi(argv[3]) : 1;
    if (T < 1 || T > 16) {
        std::fprintf(stderr, "T must be 1..16\n");
        return 2;
    }
    const Shape layer[] = {{dim, dim, "wq"},   {dim, kv_dim, "wk"}, {dim, kv_dim, "wv"},
                           {dim, dim, "wo"},   {dim, hidden, "w1"}, {dim, hidden, "w3"},
                           {hidden, dim, "w2"}};
    std::vector<Shape> step;
    for (int l = 0; l < layers; ++l) step.insert(step.end(), std::begin(layer), std::end(layer));
    step.push_back({dim, vocab, "classifier"});
    std::size_t weights = 0;
    for (const Shape& s : step) weights += std::size_t(s.n) * s.d;
    std::vector<float> w(weights), x(16 * 1024, 0.01f), out(16 * 2048);
    for (float& f : w) f = float(std::rand()) / float(RAND_MAX) - 0.5f;

    std::vector<double> runs;
    for (int r = 0; r < 2000; ++r) {
        const auto t0 = Clock::now();
        std::size_t at = 0;
        for (const Shape& s : step) {
            k->matmul(out.data(), x.data(), w.data() + at, T, s.n, s.d, nullptr);
            at += std::size_t(s.n) * s.d;
        }
        runs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    const double t = median(runs);
    std::printf(
        "%s, %s: one step's %zu matmuls, %d token(s), %.2f MB of weights: %.2f us, %.1f "
        "GFLOP/s\n",
        isa_name(k->isa), tiny ? "default model" : "stories260K", step.size(), T, weights * 4 / 1e6,
        t * 1e6, 2.0 * T * weights / t / 1e9);

    for (const Shape& s : {layer[0], layer[1], layer[4], layer[6], step.back()}) {
        std::vector<double> each;
        for (int r = 0; r < 7; ++r) {
            const auto t0 = Clock::now();
            for (int i = 0; i < 20000; ++i)
                k->matmul(out.data(), x.data(), w.data(), T, s.n, s.d, nullptr);
            each.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / 20000);
        }
        const double e = median(each);
        std::printf("  %-10s %4d -> %4d, in L1: %7.1f ns, %6.1f GFLOP/s\n", s.name, s.n, s.d,
                    e * 1e9, 2.0 * T * s.n * s.d / e / 1e9);
    }
}
