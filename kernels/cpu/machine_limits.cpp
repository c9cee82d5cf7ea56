#include "kernels/cpu/machine_limits.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include <thread>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace kvs::cpu {
namespace {

using Clock = std::chrono::steady_clock;

volatile float g_mul = 0.999999f, g_add = 1e-7f;

using V8 = float __attribute__((vector_size(8 * sizeof(float))));
using V16 = float __attribute__((vector_size(16 * sizeof(float))));

// 12 independent multiply-add chains of N-float vectors: enough to cover the FMA latency (4
// cycles) times the units (2) on current cores, so the rate is the units' throughput.
// Returns the multiply-adds' FLOPs (2 per lane) and a value the compiler cannot drop.
template <class V>
__attribute__((noinline)) float fma_chains(long iters, float seed, double& flops) {
    constexpr int kChains = 12, N = sizeof(V) / sizeof(float);
    V acc[kChains];
    for (int c = 0; c < kChains; ++c)
        for (int l = 0; l < N; ++l) acc[c][l] = seed + 0.001f * float(c * N + l);
    V mul, add;  // from volatiles, so the chains cannot be folded at compile time
    for (int l = 0; l < N; ++l) mul[l] = g_mul, add[l] = g_add;
    for (long i = 0; i < iters; ++i)
        for (int c = 0; c < kChains; ++c)
            acc[c] = acc[c] * mul + add;  // no reordering
                                          // without -ffast-math
    float s = 0;
    for (int c = 0; c < kChains; ++c)
        for (int l = 0; l < N; ++l) s += acc[c][l];
    flops = 2.0 * N * kChains * double(iters);
    return s;
}

// Sum of `n` floats (a multiple of 64) with 4 independent 16-float accumulators: a read-only
// stream.
__attribute__((noinline)) float read_stream(const float* p, std::size_t n) {
    V16 a[4] = {};
    for (std::size_t i = 0; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; ++k) {
            V16 v;
            std::memcpy(&v, p + i + 16 * k, sizeof v);
            a[k] += v;
        }
    float s = 0;
    for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 16; ++l) s += a[k][l];
    return s;
}

Limit summarize(std::vector<double> rates) {
    std::sort(rates.begin(), rates.end());
    Limit l;
    l.repeats = static_cast<int>(rates.size());
    l.best = rates.back();
    l.median = rates[rates.size() / 2];
    return l;
}

// The rate (units per second, summed over threads) of `threads` copies of `work` run at once;
// work(thread) returns the units it did.
// All copies run at once on their own threads (not the ops' pool, which lets the caller do
// everything when a worker is late: right for the ops, wrong for a ceiling).
template <class Work>
double rate(int threads, Work work) {
    std::vector<double> units(threads, 0.0);
    const auto t0 = Clock::now();
    std::vector<std::thread> others;
    for (int t = 1; t < threads; ++t) others.emplace_back([&, t] { units[t] = work(t); });
    units[0] = work(0);
    for (auto& th : others) th.join();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    double total = 0;
    for (double u : units) total += u;
    return total / s;
}

volatile float g_sink;  // results land here so no loop is optimised away

}  // namespace

MachineLimits measure_machine_limits(int threads, int repeats) {
    MachineLimits m;
    m.threads = threads;
#if defined(__AVX512F__)
    m.vector_isa = "AVX-512";
#elif defined(__AVX2__)
    m.vector_isa = "AVX2";
#elif defined(__AVX__)
    m.vector_isa = "AVX";
#elif defined(__SSE2__)
    m.vector_isa = "SSE2";
#else
    m.vector_isa = "generic";
#endif
    constexpr long kIters = 4'000'000;  // ~0.02-0.05 s per run on one core
    std::vector<double> f8, f16, bw;
    // 256 MiB per thread: far beyond any cache, so the stream comes from DRAM.
    const std::size_t n = (std::size_t(256) << 20) / sizeof(float);
    std::vector<std::vector<float>> bufs(threads);
    for (auto& b : bufs) b.assign(n, 1.0f);  // written once: every page is real memory
    m.buffer_bytes = double(n) * sizeof(float) * threads;
    for (int r = 0; r < repeats; ++r) {
        f8.push_back(rate(threads,
                          [&](int t) {
                              double fl;
                              g_sink = fma_chains<V8>(kIters, float(t), fl);
                              return fl;
                          }) /
                     1e9);
        f16.push_back(rate(threads,
                           [&](int t) {
                               double fl;
                               g_sink = fma_chains<V16>(kIters, float(t), fl);
                               return fl;
                           }) /
                      1e9);
        bw.push_back(rate(threads,
                          [&](int t) {
                              g_sink = read_stream(bufs[t].data(), n);
                              return double(n) * sizeof(float);
                          }) /
                     1e9);
    }
    m.fma_8 = summarize(f8);
    m.fma_16 = summarize(f16);
    m.read_bw = summarize(bw);
    return m;
}

}  // namespace kvs::cpu
