#pragma once
// Causal attention over the KV cache, scale 1/sqrt(head_dim), GQA: query head h reads kv head
// h / (n_heads / n_kv_heads). A block works on one query row t (position pos0 + t) and a group of
// query heads that share one kv head:
// - prefill (T > 1): grid (T, n_heads), one head per block, so T * n_heads blocks keep a GPU busy.
// - decode (T == 1): grid n_kv_heads, each block takes every query head of its kv head, so each
//   cached K and V row is read from global memory once per group instead of once per head.
// Block kAttnThreads (a power of two). Dynamic shared memory (attention_shared_floats):
//   scores [group, n_keys], max_part [group, threads], sum_part [group, threads].
// Phases: scores q.k / sqrt(head_dim) for this thread's keys and its running max | tree max |
// exp(score - max) and partial sums | tree sum | normalise (and write probs) | weighted sum of V.
#include <math.h>

#include <cstddef>

#include "kernels/cuda/block_phases.cuh"

namespace kvs::kern {

constexpr unsigned kAttnThreads = 128;

struct AttentionArgs {
    float* out;            // [T, n_heads * head_dim]
    const float* q;        // [T, n_heads * head_dim]
    const float* cache_k;  // [capacity, n_kv_heads * head_dim], rows 0..pos0+T-1 written
    const float* cache_v;
    float* probs;  // [n_heads, T, pos0 + T] or nullptr: softmax weights, masked cells 0
    int T;
    int pos0;
    int n_heads;
    int n_kv_heads;
    int head_dim;
};

// What one block computes: query row t, query heads h0..h0+group-1, all on kv head kvh.
struct AttentionJob {
    int t, h0, group, kvh;
    int pos;     // pos0 + t: keys 0..pos are visible
    int n_keys;  // pos0 + T: the width of a probs row
};

struct AttentionShared {
    float* scores;    // [group, n_keys]
    float* max_part;  // [group, threads]
    float* sum_part;  // [group, threads]
};

__host__ __device__ inline std::size_t attention_shared_floats(int n_keys, int group,
                                                               unsigned threads) {
    return std::size_t(group) * (std::size_t(n_keys) + 2 * threads);
}

__host__ __device__ inline AttentionShared attention_shared(float* base, const AttentionJob& j,
                                                            unsigned threads) {
    float* scores = base;
    float* max_part = scores + std::size_t(j.group) * j.n_keys;
    return {scores, max_part, max_part + std::size_t(j.group) * threads};
}

__host__ __device__ inline AttentionJob prefill_job(Dim3 block, const AttentionArgs& a) {
    const int t = static_cast<int>(block.x), h = static_cast<int>(block.y);
    const int kv_mul = a.n_heads / a.n_kv_heads;
    return {t, h, 1, h / kv_mul, a.pos0 + t, a.pos0 + a.T};
}

__host__ __device__ inline AttentionJob decode_job(Dim3 block, const AttentionArgs& a) {
    const int kvh = static_cast<int>(block.x), kv_mul = a.n_heads / a.n_kv_heads;
    return {0, kvh * kv_mul, kv_mul, kvh, a.pos0, a.pos0 + a.T};
}

__host__ __device__ inline void attention_scores(const ThreadIndex& ix, const AttentionArgs& a,
                                                 const AttentionJob& j, AttentionShared sm) {
    const int dim = a.n_heads * a.head_dim, kv_dim = a.n_kv_heads * a.head_dim;
    const unsigned tid = ix.thread.x, threads = ix.block_dim.x;
    const float scale = sqrtf(static_cast<float>(a.head_dim));
    for (int g = 0; g < j.group; ++g) sm.max_part[g * threads + tid] = -INFINITY;
    for (int s = static_cast<int>(tid); s <= j.pos; s += static_cast<int>(threads)) {
        const float* k = a.cache_k + std::size_t(s) * kv_dim + j.kvh * a.head_dim;
        for (int g = 0; g < j.group; ++g) {
            const float* q = a.q + std::size_t(j.t) * dim + (j.h0 + g) * a.head_dim;
            float score = 0.0f;
            for (int i = 0; i < a.head_dim; ++i) score += q[i] * k[i];
            score /= scale;
            sm.scores[g * j.n_keys + s] = score;
            float& m = sm.max_part[g * threads + tid];
            if (score > m) m = score;
        }
    }
}

__host__ __device__ inline void attention_exp(const ThreadIndex& ix, const AttentionJob& j,
                                              AttentionShared sm) {
    const unsigned tid = ix.thread.x, threads = ix.block_dim.x;
    for (int g = 0; g < j.group; ++g) {
        const float mx = sm.max_part[g * threads];
        float sum = 0.0f;
        for (int s = static_cast<int>(tid); s <= j.pos; s += static_cast<int>(threads)) {
            float& e = sm.scores[g * j.n_keys + s];
            e = expf(e - mx);
            sum += e;
        }
        sm.sum_part[g * threads + tid] = sum;
    }
}

__host__ __device__ inline void attention_normalize(const ThreadIndex& ix, const AttentionArgs& a,
                                                    const AttentionJob& j, AttentionShared sm) {
    const unsigned tid = ix.thread.x, threads = ix.block_dim.x;
    for (int g = 0; g < j.group; ++g) {
        const float sum = sm.sum_part[g * threads];
        float* p_row = a.probs ? a.probs + (std::size_t(j.h0 + g) * a.T + j.t) * j.n_keys : nullptr;
        for (int s = static_cast<int>(tid); s < j.n_keys; s += static_cast<int>(threads)) {
            float p = 0.0f;  // keys after pos are masked
            if (s <= j.pos) {
                p = sm.scores[g * j.n_keys + s] / sum;
                sm.scores[g * j.n_keys + s] = p;
            }
            if (p_row) p_row[s] = p;
        }
    }
}

// out[t, h, i] = sum_s p[s] * v[s, kvh, i], one (head, i) per thread, keys in increasing order.
__host__ __device__ inline void attention_weighted_sum(const ThreadIndex& ix,
                                                       const AttentionArgs& a,
                                                       const AttentionJob& j, AttentionShared sm) {
    const int dim = a.n_heads * a.head_dim, kv_dim = a.n_kv_heads * a.head_dim;
    const int outputs = j.group * a.head_dim;
    for (int e = static_cast<int>(ix.thread.x); e < outputs;
         e += static_cast<int>(ix.block_dim.x)) {
        const int g = e / a.head_dim, i = e % a.head_dim;
        const float* p = sm.scores + g * j.n_keys;
        const float* v = a.cache_v + j.kvh * a.head_dim + i;
        float o = 0.0f;
        for (int s = 0; s <= j.pos; ++s) o += p[s] * v[std::size_t(s) * kv_dim];
        a.out[std::size_t(j.t) * dim + (j.h0 + g) * a.head_dim + i] = o;
    }
}

template <class Block>
__host__ __device__ void attention_block(Block& b, const AttentionArgs& a, const AttentionJob& j,
                                         float* shared) {
    const unsigned threads = b.block_dim().x;
    const AttentionShared sm = attention_shared(shared, j, threads);
    b.phase([&](const ThreadIndex& ix) { attention_scores(ix, a, j, sm); });
    for (unsigned stride = threads / 2; stride > 0; stride /= 2)
        b.phase([&](const ThreadIndex& ix) {
            for (int g = 0; g < j.group; ++g)
                tree_max_step(sm.max_part + g * threads, ix.thread.x, stride);
        });
    b.phase([&](const ThreadIndex& ix) { attention_exp(ix, j, sm); });
    for (unsigned stride = threads / 2; stride > 0; stride /= 2)
        b.phase([&](const ThreadIndex& ix) {
            for (int g = 0; g < j.group; ++g)
                tree_sum_step(sm.sum_part + g * threads, ix.thread.x, stride);
        });
    b.phase([&](const ThreadIndex& ix) { attention_normalize(ix, a, j, sm); });
    b.phase([&](const ThreadIndex& ix) { attention_weighted_sum(ix, a, j, sm); });
}

template <class Block>
__host__ __device__ void attention_prefill_block(Block& b, const AttentionArgs& a, float* shared) {
    attention_block(b, a, prefill_job(b.block_idx(), a), shared);
}

template <class Block>
__host__ __device__ void attention_decode_block(Block& b, const AttentionArgs& a, float* shared) {
    attention_block(b, a, decode_job(b.block_idx(), a), shared);
}

}  // namespace kvs::kern
