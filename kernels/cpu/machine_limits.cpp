#include "kernels/cpu/machine_limits.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <utility>
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
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// All copies run at once on their own threads (not the ops' pool, which lets the caller do
// everything when a worker is late: right for the ops, wrong for a ceiling). Two rates, summed
// over threads: units per wall-clock second (what this moment gave) and units per second of the
// thread's own CPU time (what a core does while it runs the work: the ceiling, even when other
// processes take turns on the cores).
template <class Work>
std::pair<double, double> rate(int threads, Work work) {
    std::vector<double> units(threads, 0.0), cpu(threads, 0.0);
    auto one = [&](int t) {
        const double c0 = thread_cpu_seconds();
        units[t] = work(t);
        cpu[t] = thread_cpu_seconds() - c0;
    };
    const auto t0 = Clock::now();
    std::vector<std::thread> others;
    for (int t = 1; t < threads; ++t) others.emplace_back(one, t);
    one(0);
    for (auto& th : others) th.join();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    double total = 0, per_cpu = 0;
    for (int t = 0; t < threads; ++t) {
        total += units[t];
        per_cpu += units[t] / std::max(cpu[t], 1e-9);
    }
    return {total / s, per_cpu};
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
    // Per figure: wall-clock rates, then CPU-time rates.
    std::vector<double> f8[2], f16[2], bw[2];
    // 256 MiB per thread: far beyond any cache, so the stream comes from DRAM.
    const std::size_t n = (std::size_t(256) << 20) / sizeof(float);
    std::vector<std::vector<float>> bufs(threads);
    for (auto& b : bufs) b.assign(n, 1.0f);  // written once: every page is real memory
    m.buffer_bytes = double(n) * sizeof(float) * threads;
    auto keep = [](std::vector<double>(&into)[2], std::pair<double, double> r, double unit) {
        into[0].push_back(r.first / unit);
        into[1].push_back(r.second / unit);
    };
    for (int r = 0; r < repeats; ++r) {
        keep(f8,
             rate(threads,
                  [&](int t) {
                      double fl;
                      g_sink = fma_chains<V8>(kIters, float(t), fl);
                      return fl;
                  }),
             1e9);
        keep(f16,
             rate(threads,
                  [&](int t) {
                      double fl;
                      g_sink = fma_chains<V16>(kIters, float(t), fl);
                      return fl;
                  }),
             1e9);
        keep(bw,
             rate(threads,
                  [&](int t) {
                      g_sink = read_stream(bufs[t].data(), n);
                      return double(n) * sizeof(float);
                  }),
             1e9);
    }
    m.fma_8 = summarize(f8[0]);
    m.fma_16 = summarize(f16[0]);
    m.read_bw = summarize(bw[0]);
    m.fma_8_cpu = summarize(f8[1]);
    m.fma_16_cpu = summarize(f16[1]);
    m.read_bw_cpu = summarize(bw[1]);
    return m;
}

}  // namespace kvs::cpu
