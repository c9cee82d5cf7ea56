#pragma once
// The fused decode step (core/model/fused_ops.h): one token of one sequence in 5 kernels a layer
// and 1 more a token, where the op-by-op path launches 16 a layer and 3 a token:
//   norm_qkv      [embedding row, layer 0] + RMSNorm + q, k, v (+ bias) + RoPE + K/V append
//   attention     decode split + combine by the last block of each kv head (grid_order.cuh)
//   matvec_add    x += W in                         (wo, then w2)
//   norm_gate_up  RMSNorm + w1, w3 + SwiGLU
//   norm_logits   the final RMSNorm + the classifier
// Each is built from the op-by-op kernels' own bodies, in their order: RMSNorm's slots and tree
// (rmsnorm.cuh), a matrix row's lane sums and warp_sum (weight_dot.cuh), rope's rotation, the
// decode chunk pass and combine (attention.cuh), SwiGLU's expression. So every value equals the
// op-by-op path's bit for bit (tests/cuda/test_cuda_fused.cpp checks logits, attention rows, q, the
// attention output and K/V over 40 greedy tokens on the emulator; test_cuda_shim.cpp each kernel
// on the CPU shim; test_cuda_device.cpp on a GPU). The normalised row is never stored in device
// memory: each block recomputes the row's sum of squares (dim / 128 terms a slot and a 7-step
// tree) and writes w[j] * (inv * x[j]) into its shared memory (or, for a row longer than
// kFusedStageFloats, forms it as its lanes read x[j]: the same values). Captures are stores in the
// kernels' epilogues (q, K and V rows, the attention output), not copies.
// Launch: grid ceil(rows / kFusedWarps) (norm_qkv: row pairs), block (32, kFusedWarps), dynamic
// shared memory fused_stage_floats(dim) floats for the kernels that normalise; attention as
// decode split.
#include <math.h>

#include <cstddef>

#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/grid_order.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/weight_dot.cuh"

namespace kvs::kern {

constexpr unsigned kFusedWarps = 4;      // rows (norm_qkv: row pairs) per block, one warp each
constexpr int kFusedStageFloats = 8192;  // the longest normalised row staged in shared memory

__host__ __device__ inline int fused_stage_floats(int dim) {
    return dim <= kFusedStageFloats ? dim : 0;
}

struct FusedQkvArgs {
    float* x;               // [dim]: the residual; layer 0 writes it from the embedding row
    const float* embed;     // [vocab, dim], or null: x is already the residual
    const int* token;       // the token id, in device memory (embed only)
    const float* norm;      // [dim]: norm_att
    MatrixRef wq, wk, wv;   // [dim, dim], [kv_dim, dim], [kv_dim, dim]
    const float* bq;        // [dim] or null (Qwen2's biases)
    const float* bk;        // [kv_dim] or null
    const float* bv;        // [kv_dim] or null
    const float* inv_freq;  // [head_dim / 2]
    float* q;               // [dim], after RoPE
    float* cache_k;         // [capacity, kv_dim]: row pos0 written
    float* cache_v;
    float* q_keep;  // captures, or null: q [dim], the K and V rows [kv_dim]
    float* k_keep;
    float* v_keep;
    int dim, kv_dim, head_dim;
    float eps;
    int pos0;
    const int* pos_at = nullptr;  // in a captured graph: pos0 from device memory
};

struct FusedAttentionArgs {
    AttentionArgs att;  // T == 1; partial as decode split's
    int* tickets;       // [n_kv_heads], 0 between launches: blocks done, per kv head
    float* out_keep;    // the attention output row [n_heads * head_dim] again, or null
};

struct FusedMatvecAddArgs {
    float* x;         // [d]: x += W in
    const float* in;  // [n]
    MatrixRef w;      // [d, n]
    int n, d;
    // A test switch, never set by the backends: weight_row_lane_sum's reversed chunk order.
    int reversed = 0;
};

struct FusedGateUpArgs {
    const float* x;     // [dim]: the residual
    const float* norm;  // [dim]: norm_ffn
    MatrixRef w1, w3;   // [hidden, dim]
    float* h;           // [hidden]: silu(x w1) * (x w3)
    int dim, hidden;
    float eps;
};

struct FusedLogitsArgs {
    const float* x;     // [dim]
    const float* norm;  // [dim]: norm_final
    MatrixRef w;        // [vocab, dim]
    float* logits;      // [vocab]
    int dim, vocab;
    float eps;
};

__host__ __device__ inline int fused_warp_row(const ThreadIndex& ix) {
    return static_cast<int>(ix.block.x * kFusedWarps + ix.thread.y);
}

// xb = rmsnorm(x) * norm as the lanes read it: from the block's shared copy, or formed on the
// spot (rms_scaled, the op-by-op kernel's expression either way).
struct NormedRow {
    const float* x;
    const float* norm;
    float inv;
    const float* staged;  // [dim] in shared memory, or null
    __host__ __device__ float operator()(int j) const {
        return staged ? staged[j] : rms_scaled(x, norm, inv, j);
    }
};

// The block's RMSNorm of x [dim]: the sum of squares (rmsnorm.cuh's slots and tree), then xb
// into `stage` when the row fits there.
template <class Block>
__host__ __device__ NormedRow norm_row_block(Block& b, const float* x, const float* norm, int dim,
                                             float eps, RmsNormShared& sm, float* stage) {
    rms_sum_block(b, x, dim, sm);
    const NormedRow r{x, norm, rms_inverse(sm, dim, eps),
                      fused_stage_floats(dim) ? stage : nullptr};
    if (r.staged)
        b.phase([&](const ThreadIndex& ix) {
            for (int j = static_cast<int>(ix.flat_thread()); j < dim;
                 j += static_cast<int>(ix.block_threads()))
                stage[j] = rms_scaled(x, norm, r.inv, j);
        });
    return r;
}

// Lane sum of row i of w with xb, as the op path's matvec sums its stored xb.
__host__ __device__ inline float norm_row_lane_sum(const MatrixRef& w, int i, const NormedRow& xb,
                                                   int n, unsigned lane) {
    return weight_row_lane_sum(weight_row(w, std::size_t(i), n), w.kind, n, lane, xb);
}

// ---- norm_qkv ----
// Rows [0, dim) of [q | k | v] are q's, [dim, dim + kv_dim) k's, the rest v's; a warp takes rows
// 2p and 2p + 1, which RoPE rotates together (head_dim is even, so a pair never straddles).
struct QkvRow {
    int which;  // 0 q, 1 k, 2 v
    int i;      // the row within its matrix
};
__host__ __device__ inline QkvRow qkv_row(const FusedQkvArgs& a, int r) {
    if (r < a.dim) return {0, r};
    if (r < a.dim + a.kv_dim) return {1, r - a.dim};
    return {2, r - a.dim - a.kv_dim};
}

__host__ __device__ inline const float* fused_qkv_source(const FusedQkvArgs& a) {
    return a.embed ? a.embed + std::size_t(*a.token) * a.dim : a.x;
}

__host__ __device__ inline void fused_qkv_store(const ThreadIndex& ix, const FusedQkvArgs& a,
                                                float s0, float s1) {
    if (ix.thread.x != 0) return;
    const int pair = fused_warp_row(ix);
    if (2 * pair >= a.dim + 2 * a.kv_dim) return;
    const QkvRow r = qkv_row(a, 2 * pair);
    const float* bias = r.which == 0 ? a.bq : r.which == 1 ? a.bk : a.bv;
    float v[2] = {s0, s1};
    if (bias) v[0] += bias[r.i], v[1] += bias[r.i + 1];  // as add_bias: sum + b
    if (r.which < 2) rotate_pair(v, rope_angle(a.pos0, a.inv_freq, r.i, a.head_dim));
    float* dst = r.which == 0   ? a.q
                 : r.which == 1 ? a.cache_k + std::size_t(a.pos0) * a.kv_dim
                                : a.cache_v + std::size_t(a.pos0) * a.kv_dim;
    float* keep = r.which == 0 ? a.q_keep : r.which == 1 ? a.k_keep : a.v_keep;
    for (int e = 0; e < 2; ++e) {
        dst[r.i + e] = v[e];
        if (keep) keep[r.i + e] = v[e];
    }
}

template <class Block>
__host__ __device__ void fused_norm_qkv_block(Block& b, const FusedQkvArgs& launched,
                                              RmsNormShared& sm, float* stage) {
    grid_dependency_wait();
    grid_launch_dependents();
    const FusedQkvArgs a = at_step_position(launched);
    const float* x = fused_qkv_source(a);
    const NormedRow xb = norm_row_block(b, x, a.norm, a.dim, a.eps, sm, stage);
    auto s0 = b.template per_thread<float>(0.0f), s1 = b.template per_thread<float>(0.0f);
    b.phase([&](const ThreadIndex& ix) {
        // Layer 0: block 0 also writes the residual x from the embedding row.
        if (a.embed && ix.block.x == 0)
            for (int j = static_cast<int>(ix.flat_thread()); j < a.dim;
                 j += static_cast<int>(ix.block_threads()))
                a.x[j] = x[j];
        const int pair = fused_warp_row(ix);
        if (2 * pair >= a.dim + 2 * a.kv_dim) return;
        const QkvRow r = qkv_row(a, 2 * pair);
        const MatrixRef w = r.which == 0 ? a.wq : r.which == 1 ? a.wk : a.wv;
        s0(ix) = norm_row_lane_sum(w, r.i, xb, a.dim, ix.thread.x);
        s1(ix) = norm_row_lane_sum(w, r.i + 1, xb, a.dim, ix.thread.x);
    });
    b.warp_sum(s0);
    b.warp_sum(s1);
    b.phase([&](const ThreadIndex& ix) { fused_qkv_store(ix, a, s0(ix), s1(ix)); });
}

// ---- attention: split, then the last block of each kv head combines ----
// Shared memory: decode split's, whose last float says whether this block drew the last ticket.
template <class Block>
__host__ __device__ void fused_attention_block(Block& b, const FusedAttentionArgs& launched,
                                               float* shared) {
    grid_dependency_wait();
    grid_launch_dependents();
    FusedAttentionArgs f = launched;
    f.att = at_step_position(launched.att);
    const AttentionArgs& a = f.att;
    const int done = attention_decode_split_chunks(b, a, shared);
    if (done == 0) return;  // a block past the keys: no ticket (the whole block returns)
    const int kvh = static_cast<int>(b.block_idx().x), group = attention_group(a);
    const unsigned per = decode_chunk_keys(a);
    const int chunks = static_cast<int>(decode_chunks(a.pos0 + 1, per));
    const int blocks =
        static_cast<int>(b.grid_dim().y) < chunks ? static_cast<int>(b.grid_dim().y) : chunks;
    float* last = shared + chunk_shared_floats(per, group, a.head_dim, false) - 1;
    b.phase([&](const ThreadIndex&) { grid_fence(); });  // every thread's slots, then the ticket
    b.phase([&](const ThreadIndex& ix) {
        if (ix.thread.x == 0) *last = grid_ticket(f.tickets + kvh) == blocks - 1 ? 1.0f : 0.0f;
    });
    if (*last == 0.0f) return;  // the same for every thread of the block
    b.phase([&](const ThreadIndex& ix) {
        grid_fence();
        for (int h = kvh * group; h < (kvh + 1) * group; ++h)
            attention_combine_head(ix, a, h, [](const float* p) { return load_shared_result(p); });
        if (ix.thread.x == 0) f.tickets[kvh] = 0;  // ready for the next launch
    });
    if (!f.out_keep) return;
    b.phase([&](const ThreadIndex& ix) {
        const int first = kvh * group * a.head_dim, n = group * a.head_dim;
        for (int e = static_cast<int>(ix.thread.x); e < n; e += static_cast<int>(ix.block_dim.x))
            f.out_keep[first + e] = a.out[first + e];
    });
}

// ---- matvec_add: x[i] += W[i] . in ----
template <class Block>
__host__ __device__ void fused_matvec_add_block(Block& b, const FusedMatvecAddArgs& a) {
    grid_dependency_wait();
    grid_launch_dependents();
    auto s = b.template per_thread<float>(0.0f);
    b.phase([&](const ThreadIndex& ix) {
        const int i = fused_warp_row(ix);
        if (i >= a.d) return;
        s(ix) = weight_row_lane_sum(
            weight_row(a.w, std::size_t(i), a.n), a.w.kind, a.n, ix.thread.x,
            [&](int j) { return a.in[j]; }, a.reversed != 0);
    });
    b.warp_sum(s);
    b.phase([&](const ThreadIndex& ix) {
        const int i = fused_warp_row(ix);
        if (ix.thread.x == 0 && i < a.d) a.x[i] += s(ix);  // as add: x + (W in)
    });
}

// ---- norm_gate_up: h[i] = silu(xb . w1[i]) * (xb . w3[i]) ----
template <class Block>
__host__ __device__ void fused_norm_gate_up_block(Block& b, const FusedGateUpArgs& a,
                                                  RmsNormShared& sm, float* stage) {
    grid_dependency_wait();
    grid_launch_dependents();
    const NormedRow xb = norm_row_block(b, a.x, a.norm, a.dim, a.eps, sm, stage);
    auto g = b.template per_thread<float>(0.0f), u = b.template per_thread<float>(0.0f);
    b.phase([&](const ThreadIndex& ix) {
        const int i = fused_warp_row(ix);
        if (i >= a.hidden) return;
        g(ix) = norm_row_lane_sum(a.w1, i, xb, a.dim, ix.thread.x);
        u(ix) = norm_row_lane_sum(a.w3, i, xb, a.dim, ix.thread.x);
    });
    b.warp_sum(g);
    b.warp_sum(u);
    b.phase([&](const ThreadIndex& ix) {
        const int i = fused_warp_row(ix);
        if (ix.thread.x != 0 || i >= a.hidden) return;
        a.h[i] = silu_times(g(ix), u(ix));
    });
}

// ---- norm_logits: logits[i] = xb . w[i] ----
template <class Block>
__host__ __device__ void fused_norm_logits_block(Block& b, const FusedLogitsArgs& a,
                                                 RmsNormShared& sm, float* stage) {
    grid_dependency_wait();
    grid_launch_dependents();
    const NormedRow xb = norm_row_block(b, a.x, a.norm, a.dim, a.eps, sm, stage);
    auto s = b.template per_thread<float>(0.0f);
    b.phase([&](const ThreadIndex& ix) {
        const int i = fused_warp_row(ix);
        if (i >= a.vocab) return;
        s(ix) = norm_row_lane_sum(a.w, i, xb, a.dim, ix.thread.x);
    });
    b.warp_sum(s);
    b.phase([&](const ThreadIndex& ix) {
        const int i = fused_warp_row(ix);
        if (ix.thread.x == 0 && i < a.vocab) a.logits[i] = s(ix);
    });
}

}  // namespace kvs::kern
