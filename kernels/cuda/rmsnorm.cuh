#pragma once
// RMSNorm, one block per row: out[t] = w * x[t] / sqrt(mean(x[t]^2) + eps).
// Launch: grid T, block kRmsThreads (a power of two, for the tree reduction).
// Phases: each thread sums the squares of its strided columns | tree reduction of the partial
// sums in shared memory | each thread scales its columns.
#include <math.h>

#include <cstddef>

#include "kernels/cuda/block_phases.cuh"

namespace kvs::kern {

constexpr unsigned kRmsThreads = 128;

struct RmsNormArgs {
    float* out;      // [T, dim]; may alias x: each thread rewrites only what it read
    const float* x;  // [T, dim]
    const float* w;  // [dim]
    int T;
    int dim;
    float eps;  // the model's (ModelConfig::norm_eps)
};

struct RmsNormShared {
    float partial[kRmsThreads];  // one sum of squares per thread
};

__host__ __device__ inline void rmsnorm_partial(const ThreadIndex& ix, const RmsNormArgs& a,
                                                RmsNormShared& sm) {
    const float* x = a.x + std::size_t(ix.block.x) * a.dim;
    float ss = 0.0f;
    for (int j = static_cast<int>(ix.thread.x); j < a.dim; j += static_cast<int>(ix.block_dim.x))
        ss += x[j] * x[j];
    sm.partial[ix.thread.x] = ss;
}

__host__ __device__ inline void rmsnorm_scale(const ThreadIndex& ix, const RmsNormArgs& a,
                                              const RmsNormShared& sm) {
    const std::size_t row = std::size_t(ix.block.x) * a.dim;
    const float inv = 1.0f / sqrtf(sm.partial[0] / a.dim + a.eps);
    for (int j = static_cast<int>(ix.thread.x); j < a.dim; j += static_cast<int>(ix.block_dim.x))
        a.out[row + j] = a.w[j] * (inv * a.x[row + j]);
}

template <class Block>
__host__ __device__ void rmsnorm_block(Block& b, const RmsNormArgs& a, RmsNormShared& sm) {
    if (static_cast<int>(b.block_idx().x) >= a.T) return;  // whole block: no barrier skipped
    b.phase([&](const ThreadIndex& ix) { rmsnorm_partial(ix, a, sm); });
    for (unsigned stride = b.block_dim().x / 2; stride > 0; stride /= 2)
        b.phase([&](const ThreadIndex& ix) { tree_sum_step(sm.partial, ix.thread.x, stride); });
    b.phase([&](const ThreadIndex& ix) { rmsnorm_scale(ix, a, sm); });
}

}  // namespace kvs::kern
