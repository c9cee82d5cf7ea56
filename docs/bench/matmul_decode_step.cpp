// The CPU matmuls of one cached decode step of stories260K (dim 64, hidden 172, 5 layers, 4 KV
// heads of 8, vocab 512), alone: 36 calls with one token, each layer's matrices distinct as in
// the model (1.04 MB, more than this guest's L2 holds), timed as a whole step, median of 2000
// steps; then each shape alone with its matrix in L1 (median of 7 runs of 20,000 calls). Not part
// of the build; from a build dir of scripts/test.sh (one line):
//   g++ -O2 -std=c++20 -I. docs/bench/matmul_decode_step.cpp build/kernels/libkvscope_kernels.a
//       build/core/libkvscope_core.a -lpthread -o /tmp/matmul_decode_step
// KVSCOPE_ISA is not read here: the first argument names the path (avx512 by default).
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
    const Shape layer[] = {{64, 64, "wq"},  {64, 32, "wk"},  {64, 32, "wv"}, {64, 64, "wo"},
                           {64, 172, "w1"}, {64, 172, "w3"}, {172, 64, "w2"}};
    std::vector<Shape> step;
    for (int l = 0; l < 5; ++l) step.insert(step.end(), std::begin(layer), std::end(layer));
    step.push_back({64, 512, "classifier"});
    std::size_t weights = 0;
    for (const Shape& s : step) weights += std::size_t(s.n) * s.d;
    std::vector<float> w(weights), x(512, 0.01f), out(512);
    for (float& f : w) f = float(std::rand()) / float(RAND_MAX) - 0.5f;

    std::vector<double> runs;
    for (int r = 0; r < 2000; ++r) {
        const auto t0 = Clock::now();
        std::size_t at = 0;
        for (const Shape& s : step) {
            k->matmul(out.data(), x.data(), w.data() + at, 1, s.n, s.d, nullptr);
            at += std::size_t(s.n) * s.d;
        }
        runs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    const double t = median(runs);
    std::printf("%s: one step's 36 matmuls, %.2f MB of weights: %.2f us, %.1f GFLOP/s\n",
                isa_name(k->isa), weights * 4 / 1e6, t * 1e6, 2.0 * weights / t / 1e9);

    for (const Shape& s : {layer[0], layer[1], layer[4], layer[6], step.back()}) {
        std::vector<double> each;
        for (int r = 0; r < 7; ++r) {
            const auto t0 = Clock::now();
            for (int i = 0; i < 20000; ++i)
                k->matmul(out.data(), x.data(), w.data(), 1, s.n, s.d, nullptr);
            each.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / 20000);
        }
        const double e = median(each);
        std::printf("  %-10s %4d -> %4d, in L1: %7.1f ns, %6.1f GFLOP/s\n", s.name, s.n, s.d,
                    e * 1e9, 2.0 * s.n * s.d / e / 1e9);
    }
}
