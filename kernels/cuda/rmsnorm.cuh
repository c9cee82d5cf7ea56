#pragma once
// RMSNorm, one block per row: out[t] = w * x[t] / sqrt(mean(x[t]^2) + eps).
// Launch: grid T, block up to kRmsSlots threads (whole warps).
// Phases: the sum of squares in kRmsSlots partial sums (slot s: columns s, s + kRmsSlots, ...,
// each term one fmaf), each thread filling the slots s = its index, + its block size, ... |
// slots s < 32 take (s + s+32) + (s+64 + s+96), and a warp_sum over those 32 (block_phases.cuh's
// butterfly) gives the row's sum | thread 0 stores it | each thread scales its columns.
//
// The slots, not the threads, fix the order of the sum, so every block size gives the same bits,
// and the fused decode kernels (fused_decode.cuh), whose blocks RMS-normalise x on their way into
// a matrix, call the same functions and get the op-by-op kernel's bits.
#include <math.h>

#include <cstddef>

#include "kernels/cuda/block_phases.cuh"

namespace kvs::kern {

constexpr unsigned kRmsThreads = 128;  // the block the backends launch
constexpr unsigned kRmsSlots = 128;    // partial sums, whatever the block size

struct RmsNormArgs {
    float* out;      // [T, dim]; may alias x: each thread rewrites only what it read
    const float* x;  // [T, dim]
    const float* w;  // [dim]
    int T;
    int dim;
    float eps;  // the model's (ModelConfig::norm_eps)
};

struct RmsNormShared {
    float partial[kRmsSlots];  // one sum of squares per slot; partial[0] the row's at the end
};

// Slots this thread fills: s = its index, + the block's threads, ...
__host__ __device__ inline void rms_partial_sums(const ThreadIndex& ix, const float* x, int dim,
                                                 RmsNormShared& sm) {
    for (unsigned s = ix.flat_thread(); s < kRmsSlots; s += ix.block_threads()) {
        float ss = 0.0f;
        for (int j = static_cast<int>(s); j < dim; j += static_cast<int>(kRmsSlots))
            ss = fmaf(x[j], x[j], ss);
        sm.partial[s] = ss;
    }
}

// Lane s of the first warp: slots s, s + 32, s + 64, s + 96 in that pairing; 0 elsewhere.
__host__ __device__ inline float rms_quarter(const ThreadIndex& ix, const RmsNormShared& sm) {
    const unsigned s = ix.flat_thread();
    if (s >= kWarpSize) return 0.0f;
    return (sm.partial[s] + sm.partial[s + 32]) + (sm.partial[s + 64] + sm.partial[s + 96]);
}

// 1 / sqrt(mean of squares + eps), once rms_sum_block has run.
__host__ __device__ inline float rms_inverse(const RmsNormShared& sm, int dim, float eps) {
    return 1.0f / sqrtf(sm.partial[0] / dim + eps);
}

// One normalised value: w[j] * (inv * x[j]), as the op-by-op kernel stores it.
__host__ __device__ inline float rms_scaled(const float* x, const float* w, float inv, int j) {
    return w[j] * (inv * x[j]);
}

// The sum of squares of x [dim] into sm.partial[0], every thread of the block taking part.
template <class Block>
__host__ __device__ void rms_sum_block(Block& b, const float* x, int dim, RmsNormShared& sm) {
    static_assert(kRmsSlots == 4 * kWarpSize, "four slots a lane of the first warp");
    auto v = b.template per_thread<float>(0.0f);
    b.phase([&](const ThreadIndex& ix) { rms_partial_sums(ix, x, dim, sm); });
    b.phase([&](const ThreadIndex& ix) { v(ix) = rms_quarter(ix, sm); });
    b.warp_sum(v);
    b.phase([&](const ThreadIndex& ix) {
        if (ix.flat_thread() == 0) sm.partial[0] = v(ix);
    });
}

__host__ __device__ inline void rmsnorm_scale(const ThreadIndex& ix, const RmsNormArgs& a,
                                              const RmsNormShared& sm) {
    const std::size_t row = std::size_t(ix.block.x) * a.dim;
    const float inv = rms_inverse(sm, a.dim, a.eps);
    for (int j = static_cast<int>(ix.thread.x); j < a.dim; j += static_cast<int>(ix.block_dim.x))
        a.out[row + j] = rms_scaled(a.x + row, a.w, inv, j);
}

template <class Block>
__host__ __device__ void rmsnorm_block(Block& b, const RmsNormArgs& a, RmsNormShared& sm) {
    if (static_cast<int>(b.block_idx().x) >= a.T) return;  // whole block: no barrier skipped
    rms_sum_block(b, a.x + std::size_t(b.block_idx().x) * a.dim, a.dim, sm);
    b.phase([&](const ThreadIndex& ix) { rmsnorm_scale(ix, a, sm); });
}

}  // namespace kvs::kern
