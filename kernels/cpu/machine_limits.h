#pragma once
// This machine's ceilings, measured rather than looked up: the float32 multiply-add rate of the
// cores (FMA peak) and the rate at which they can stream memory they only read. A decode step is
// bound by the second (every weight read once per token), a long prefill by the first; `bench
// --limits` prints both so a report can say what fraction of the ceiling it reached.
#include <string>

namespace kvs::cpu {

struct Limit {
    double best = 0, median = 0;  // of `repeats` timed runs, in GFLOP/s or GB/s
    int repeats = 0;
};

struct MachineLimits {
    int threads = 1;
    Limit fma_8;    // 8-float vectors (AVX2 width; the kernels' width on the avx2 and sse paths)
    Limit fma_16;   // 16-float vectors (AVX-512 width; the kernels' width on the avx512 path)
    Limit read_bw;  // GB/s, one pass over `buffer_bytes` of float32, summed
    // The same per second of each thread's own CPU time: what a core does while it runs, the
    // ceiling even on a machine where other processes take turns (the rates above are per
    // wall-clock second: what this moment gave).
    Limit fma_8_cpu, fma_16_cpu, read_bw_cpu;
    double buffer_bytes = 0;
    std::string vector_isa;  // the SIMD path the probes and the ops ran (isa.h: active_isa())
};

// Each figure is the best and the median of `repeats` runs; `threads` > 1 runs that many copies
// at once (one std::thread each) and adds their rates. Takes about repeats * 0.15 s.
MachineLimits measure_machine_limits(int threads, int repeats);

}  // namespace kvs::cpu
