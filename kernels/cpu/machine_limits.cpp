#include "kernels/cpu/machine_limits.h"

#include "kernels/cpu/isa_kernels.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

#include <thread>

namespace kvs::cpu {
namespace {

using Clock = std::chrono::steady_clock;

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
    // The probes of the path the ops run (isa.h): the same detection and KVSCOPE_ISA.
    const Kernels& k = active_kernels();
    m.vector_isa = isa_name(k.isa);
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
                      g_sink = k.fma_chains(8, kIters, float(t), fl);
                      return fl;
                  }),
             1e9);
        keep(f16,
             rate(threads,
                  [&](int t) {
                      double fl;
                      g_sink = k.fma_chains(16, kIters, float(t), fl);
                      return fl;
                  }),
             1e9);
        keep(bw,
             rate(threads,
                  [&](int t) {
                      g_sink = k.read_stream(bufs[t].data(), n);
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
