// The loops `bench --limits` times (machine_limits.cpp), compiled once per SIMD path like the ops
// (isa_kernels.h), so the FMA peak and read bandwidth are those of the vectors the path runs.
#include <cstring>

#include "kernels/cpu/isa_kernels.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace kvs::cpu::KVS_ISA_NS {
namespace {

volatile float g_mul = 0.999999f, g_add = 1e-7f;

using V8 = float __attribute__((vector_size(8 * sizeof(float))));
using V16 = float __attribute__((vector_size(16 * sizeof(float))));

// 12 independent multiply-add chains of N-float vectors: enough to cover the FMA latency (4
// cycles) times the units (2) on current cores, so the rate is the units' throughput.
// Returns the multiply-adds' FLOPs (2 per lane) and a value the compiler cannot drop.
template <class V>
float chains(long iters, float seed, double& flops) {
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
}  // namespace

float read_stream(const float* p, std::size_t n) {
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

float fma_chains(int width, long iters, float seed, double& flops) {
    return width == 16 ? chains<V16>(iters, seed, flops) : chains<V8>(iters, seed, flops);
}

}  // namespace kvs::cpu::KVS_ISA_NS
