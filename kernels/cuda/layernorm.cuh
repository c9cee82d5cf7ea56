#pragma once
// LayerNorm (GPT-2's), one block per row:
//   out[t] = (x[t] - mean) / sqrt(var + eps) * w + b,   mean, var over the row's dim values.
// Launch: grid T, block kLayerNormThreads (a power of two, for the tree reductions).
// Phases: each thread sums its strided columns | tree reduction of those sums | each thread sums
// the squared deviations of its columns from the mean | tree reduction of those | each thread
// normalises, scales and shifts its columns.
//
// Two passes over the row, as ref::layernorm: the variance is the mean of squared deviations, not
// E[x^2] - mean^2, which cancels catastrophically when |mean| is large next to the spread. The
// partial sums are float, where the reference's are double: each thread adds dim / blockDim values
// and the tree log2(blockDim) levels, so a sum's rounding grows with about dim / 128 + 7 additions,
// not dim of them (at dim 768 the output is within 1e-7 of the reference's, relative, on an H200),
// and doubles run at a small fraction of float speed on most GPUs.
#include <math.h>

#include <cstddef>

#include "kernels/cuda/block_phases.cuh"

namespace kvs::kern {

constexpr unsigned kLayerNormThreads = 128;

struct LayerNormArgs {
    float* out;      // [T, dim]; may alias x: each thread rewrites only what it read
    const float* x;  // [T, dim]
    const float* w;  // [dim], the scale (gamma)
    const float* b;  // [dim], the shift (beta)
    int T;
    int dim;
    float eps;  // the model's (GPT-2: 1e-5)
};

// Separate slots for the two reductions: the deviation pass reads the mean from sum[0] while every
// thread writes its own sq[] slot, so the second reduction cannot overwrite the first's result.
struct LayerNormShared {
    float sum[kLayerNormThreads];  // one sum of x per thread; sum[0] the row's, after the tree
    float sq[kLayerNormThreads];   // one sum of (x - mean)^2 per thread; sq[0] the row's
};

__host__ __device__ inline void layernorm_sum(const ThreadIndex& ix, const LayerNormArgs& a,
                                              LayerNormShared& sm) {
    const float* x = a.x + std::size_t(ix.block.x) * a.dim;  // this block's row: [dim]
    float s = 0.0f;
    for (int j = static_cast<int>(ix.thread.x); j < a.dim; j += static_cast<int>(ix.block_dim.x))
        s += x[j];
    sm.sum[ix.thread.x] = s;
}

__host__ __device__ inline void layernorm_deviation(const ThreadIndex& ix, const LayerNormArgs& a,
                                                    LayerNormShared& sm) {
    const float* x = a.x + std::size_t(ix.block.x) * a.dim;
    const float mean = sm.sum[0] / a.dim;
    float ss = 0.0f;
    for (int j = static_cast<int>(ix.thread.x); j < a.dim; j += static_cast<int>(ix.block_dim.x)) {
        const float d = x[j] - mean;
        ss += d * d;
    }
    sm.sq[ix.thread.x] = ss;
}

__host__ __device__ inline void layernorm_scale(const ThreadIndex& ix, const LayerNormArgs& a,
                                                const LayerNormShared& sm) {
    const std::size_t row = std::size_t(ix.block.x) * a.dim;
    const float mean = sm.sum[0] / a.dim;
    const float inv = 1.0f / sqrtf(sm.sq[0] / a.dim + a.eps);  // variance over dim, not dim - 1
    for (int j = static_cast<int>(ix.thread.x); j < a.dim; j += static_cast<int>(ix.block_dim.x))
        a.out[row + j] = (a.x[row + j] - mean) * inv * a.w[j] + a.b[j];
}

template <class Block>
__host__ __device__ void layernorm_block(Block& b, const LayerNormArgs& a, LayerNormShared& sm) {
    if (static_cast<int>(b.block_idx().x) >= a.T) return;  // whole block: no barrier skipped
    b.phase([&](const ThreadIndex& ix) { layernorm_sum(ix, a, sm); });
    for (unsigned stride = b.block_dim().x / 2; stride > 0; stride /= 2)
        b.phase([&](const ThreadIndex& ix) { tree_sum_step(sm.sum, ix.thread.x, stride); });
    b.phase([&](const ThreadIndex& ix) { layernorm_deviation(ix, a, sm); });
    for (unsigned stride = b.block_dim().x / 2; stride > 0; stride /= 2)
        b.phase([&](const ThreadIndex& ix) { tree_sum_step(sm.sq, ix.thread.x, stride); });
    b.phase([&](const ThreadIndex& ix) { layernorm_scale(ix, a, sm); });
}

}  // namespace kvs::kern
