#pragma once
// out[t, i] = sum_j w[i, j] * x[t, j]      x: [T, n], w: [d, n], out: [T, d]
// w is float32, f16 or bf16 (weight_dot.cuh: widened as it is read, float32 arithmetic).
//
// Two kernels, picked by the number of rows (on a GPU the cuda backend hands T > 1 to cuBLAS,
// kernels/cuda/cublas_gemm.h; the emulated backend keeps the tiled kernel):
// - tiled (prefill, T > 1): a block computes a kTile x kTile tile of out. The n axis is walked in
//   tiles: the block stages x[rows, k0..k0+kTile) and w[cols, k0..k0+kTile) in shared memory
//   (each thread loads one element of each), then every thread accumulates its dot product from
//   them. Each staged value is read by kTile threads, which is the saving over reading w straight
//   from global memory. Launch: grid (ceil(d / kTile), ceil(T / kTile)), block (kTile, kTile).
// - matrix-vector (decode, T == 1): a warp per output element, its lanes reading 16 bytes at a
//   time (weight_dot.cuh gives the order), then a warp_sum (block_phases.cuh).
//   Launch: grid ceil(d / rows), block (kMatvecLanes, rows), rows per block from matvec_shape
//   (fewer rows a block when d is small, so that a GPU gets enough blocks).
#include <math.h>

#include <cstddef>

#include "kernels/cuda/block_phases.cuh"
#include "kernels/cuda/weight_dot.cuh"

namespace kvs::kern {

struct MatmulArgs {
    float* out;      // [T, d]
    const float* x;  // [T, n]
    MatrixRef w;     // [d, n]
    int T;
    int n;
    int d;
};

// ---- tiled ----
constexpr unsigned kTile = 16;

struct MatmulTiles {
    float x[kTile][kTile + 1];  // x[block rows][k0 + kk]; +1 column: no shared-memory bank clash
    float w[kTile][kTile + 1];  // w[block cols][k0 + kk]
};

// Thread (tx, ty) loads x[row ty][k0 + tx] and w[col ty][k0 + tx]; zeros outside the matrices,
// so the accumulation below needs no bounds checks.
__host__ __device__ inline void matmul_load_tiles(const ThreadIndex& ix, const MatmulArgs& a,
                                                  int k0, MatmulTiles& sm) {
    const unsigned tx = ix.thread.x, ty = ix.thread.y;
    const int k = k0 + static_cast<int>(tx);
    const int t = static_cast<int>(ix.block.y * kTile + ty);
    const int i = static_cast<int>(ix.block.x * kTile + ty);
    sm.x[ty][tx] = t < a.T && k < a.n ? a.x[std::size_t(t) * a.n + k] : 0.0f;
    sm.w[ty][tx] = i < a.d && k < a.n ? weight_at(a.w, std::size_t(i), a.n, k) : 0.0f;
}

// acc of thread (tx, ty) is out[row ty, col tx]; terms are added in increasing j (one fmaf each).
__host__ __device__ inline void matmul_accumulate(const ThreadIndex& ix, const MatmulTiles& sm,
                                                  float& acc) {
    const unsigned tx = ix.thread.x, ty = ix.thread.y;
    for (unsigned kk = 0; kk < kTile; ++kk) acc = fmaf(sm.w[tx][kk], sm.x[ty][kk], acc);
}

__host__ __device__ inline void matmul_store(const ThreadIndex& ix, const MatmulArgs& a,
                                             float acc) {
    const int t = static_cast<int>(ix.block.y * kTile + ix.thread.y);
    const int i = static_cast<int>(ix.block.x * kTile + ix.thread.x);
    if (t < a.T && i < a.d) a.out[std::size_t(t) * a.d + i] = acc;
}

template <class Block>
__host__ __device__ void matmul_tiled_block(Block& b, const MatmulArgs& a, MatmulTiles& sm) {
    auto acc = b.template per_thread<float>(0.0f);
    for (int k0 = 0; k0 < a.n; k0 += static_cast<int>(kTile)) {
        b.phase([&](const ThreadIndex& ix) { matmul_load_tiles(ix, a, k0, sm); });
        b.phase([&](const ThreadIndex& ix) { matmul_accumulate(ix, sm, acc(ix)); });
    }
    b.phase([&](const ThreadIndex& ix) { matmul_store(ix, a, acc(ix)); });
}

// ---- matrix-vector ----
constexpr unsigned kMatvecLanes = kWarpSize;  // one warp per output element
constexpr unsigned kMatvecRows = 8;           // output elements per block, at most

__host__ __device__ inline int matvec_row(const ThreadIndex& ix) {
    return static_cast<int>(ix.block.x * ix.block_dim.y + ix.thread.y);
}

// This lane's share of out[i] (weight_dot.cuh's order).
__host__ __device__ inline float matvec_partial(const ThreadIndex& ix, const MatmulArgs& a) {
    const int i = matvec_row(ix);
    if (i >= a.d) return 0.0f;
    return weight_row_lane_sum(weight_row(a.w, std::size_t(i), a.n), a.w.kind, a.n, ix.thread.x,
                               [&](int j) { return a.x[j]; });
}

__host__ __device__ inline void matvec_store(const ThreadIndex& ix, const MatmulArgs& a,
                                             float sum) {
    const int i = matvec_row(ix);
    if (ix.thread.x == 0 && i < a.d) a.out[i] = sum;
}

// The warp's partial sums are combined by warp_sum (a butterfly of shuffles: no shared memory, no
// barrier).
template <class Block>
__host__ __device__ void matvec_block(Block& b, const MatmulArgs& a) {
    auto part = b.template per_thread<float>(0.0f);
    b.phase([&](const ThreadIndex& ix) { part(ix) = matvec_partial(ix, a); });
    b.warp_sum(part);
    b.phase([&](const ThreadIndex& ix) { matvec_store(ix, a, part(ix)); });
}

}  // namespace kvs::kern
