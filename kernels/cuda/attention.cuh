#pragma once
// Causal attention over the KV cache, scale 1/sqrt(head_dim), GQA: query head h reads kv head
// h / (n_heads / n_kv_heads). A block works on one query row t (position pos0 + t) and a group of
// query heads that share one kv head:
// - prefill (T > 1): grid (T, n_heads), one head per block, so T * n_heads blocks keep a GPU busy.
//   Block kAttnThreads (a power of two). Dynamic shared memory (attention_shared_floats):
//   scores [group, n_keys], max_part [group, threads], sum_part [group, threads].
//   Phases: scores q.k / sqrt(head_dim) for this thread's keys and its running max | tree max |
//   exp(score - max) and partial sums | tree sum | normalise (and write probs) | weighted sum of V.
// - decode (T == 1), split over the keys (flash-decoding), two kernels; see "decode" below.
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
    float* partial;  // decode only: [n_heads, decode_chunks(pos0 + 1), head_dim + 2] scratch
    // Decode only, for a launch captured into a CUDA Graph and replayed at every position:
    // pos0 read from device memory (portability.cuh), and probs rows probs_stride floats apart
    // (the cache's capacity, so a layer's rows do not move with the position; 0: n_keys apart).
    // The split grid is then sized for the whole cache; chunks past the keys do nothing.
    const int* pos_at = nullptr;
    int probs_stride = 0;
    // 1: query row t sees keys 0..pos0+t (a decoder's causal mask); 0: every key (an encoder's).
    // A decode row (T == 1) sees every key either way.
    int causal = 1;
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
    return {t, h, 1, h / kv_mul, a.causal ? a.pos0 + t : a.pos0 + a.T - 1, a.pos0 + a.T};
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

// ---- decode: split over the keys (flash-decoding) ----
// One query row (T == 1) over n_keys = pos0 + 1 cached keys, all visible.
// 1. split: grid (n_kv_heads, decode_chunks(n_keys)), block kDecodeThreads. Block (kvh, c) takes
//    keys c * kDecodeChunk .. (at most kDecodeChunk of them) and every query head of kv head kvh,
//    so a K or V row is read once per group. The chunk's K rows are staged in shared memory by
//    consecutive threads reading consecutive floats (coalesced), then one thread per key scores
//    it. Per head and chunk it leaves in `partial` [m, l, o[0..head_dim)]: m the chunk's largest
//    score, l = sum exp(score - m), o = sum exp(score - m) v (V rows staged the same way), and the
//    raw scores in the probs row when probs are wanted. Max and sum: warp_max / warp_sum, then
//    the warps' results in increasing order.
// 2. combine: grid n_heads, block kAttnThreads, no shared memory. Each thread folds the chunks in
//    increasing order: M = max m_c, L = sum l_c exp(m_c - M); out = sum o_c exp(m_c - M) / L;
//    probs p = exp(score - M) / L.
// Every order is fixed, so the bits are the same at every run, on the emulator, the CPU shim and
// the device. n_kv_heads * chunks blocks (an H100 has 132 SMs): 512 keys and 4 kv heads give 32.
constexpr unsigned kDecodeThreads = 64;  // whole warps (warp_max, warp_sum)
constexpr unsigned kDecodeChunk = 64;    // keys per block: one per thread

__host__ __device__ inline unsigned decode_chunks(int n_keys) {
    return blocks_for(static_cast<unsigned long long>(n_keys), kDecodeChunk);
}
__host__ __device__ inline std::size_t decode_partial_floats(int n_heads, int n_keys,
                                                             int head_dim) {
    return std::size_t(n_heads) * decode_chunks(n_keys) * (std::size_t(head_dim) + 2);
}
// kv [kDecodeChunk, head_dim] | scores [group, kDecodeChunk] | warp maxima, warp sums [group,
// warps]
__host__ __device__ inline std::size_t decode_split_shared_floats(int group, int head_dim) {
    const std::size_t warps = kDecodeThreads / kWarpSize;
    return std::size_t(kDecodeChunk) * head_dim + std::size_t(group) * (kDecodeChunk + 2 * warps);
}

// Floats between two heads' probs rows in decode.
__host__ __device__ inline std::size_t decode_probs_row(const AttentionArgs& a, int n_keys) {
    return a.probs_stride > 0 ? std::size_t(a.probs_stride) : std::size_t(n_keys);
}

struct DecodeChunk {
    int kvh, h0, group;  // query heads h0..h0+group-1 share kv head kvh
    int c, s0, n;        // chunk c: keys s0..s0+n-1
    int n_keys;
};

__host__ __device__ inline DecodeChunk decode_chunk(Dim3 block, const AttentionArgs& a) {
    const int kv_mul = a.n_heads / a.n_kv_heads, n_keys = a.pos0 + 1;
    const int c = static_cast<int>(block.y), s0 = c * static_cast<int>(kDecodeChunk);
    const int left = n_keys - s0, n = left < int(kDecodeChunk) ? left : int(kDecodeChunk);
    const int kvh = static_cast<int>(block.x);
    return {kvh, kvh * kv_mul, kv_mul, c, s0, n, n_keys};
}

// Head h's slot for chunk c in partial: [m, l, o[0..head_dim)].
__host__ __device__ inline float* decode_slot(const AttentionArgs& a, int h, int c) {
    const std::size_t chunks = decode_chunks(a.pos0 + 1);
    return a.partial + (std::size_t(h) * chunks + c) * (std::size_t(a.head_dim) + 2);
}

struct DecodeShared {
    float* kv;       // [kDecodeChunk, head_dim]
    float* scores;   // [group, kDecodeChunk]
    float* warp_mx;  // [group, warps]
    float* warp_sm;  // [group, warps]
};

__host__ __device__ inline DecodeShared decode_shared(float* base, const AttentionArgs& a,
                                                      const DecodeChunk& j) {
    const unsigned warps = kDecodeThreads / kWarpSize;
    float* scores = base + std::size_t(kDecodeChunk) * a.head_dim;
    float* warp_mx = scores + std::size_t(j.group) * kDecodeChunk;
    return {base, scores, warp_mx, warp_mx + std::size_t(j.group) * warps};
}

// kv[r, i] = cache[s0 + r, kvh, i]: thread t copies floats t, t + threads, ... of the chunk.
__host__ __device__ inline void decode_stage_rows(const ThreadIndex& ix, const AttentionArgs& a,
                                                  const DecodeChunk& j, const float* cache,
                                                  DecodeShared sm) {
    const int kv_dim = a.n_kv_heads * a.head_dim, total = j.n * a.head_dim;
    for (int e = static_cast<int>(ix.thread.x); e < total; e += static_cast<int>(ix.block_dim.x)) {
        const int r = e / a.head_dim, i = e % a.head_dim;
        sm.kv[e] = cache[std::size_t(j.s0 + r) * kv_dim + j.kvh * a.head_dim + i];
    }
}

// One thread per key of the chunk: its score for every head of the group (q.k / sqrt(head_dim),
// i increasing, as the CPU does); raw scores also go to the probs rows.
__host__ __device__ inline void decode_scores(const ThreadIndex& ix, const AttentionArgs& a,
                                              const DecodeChunk& j, DecodeShared sm) {
    const int r = static_cast<int>(ix.thread.x);
    if (r >= j.n) return;
    const float scale = sqrtf(static_cast<float>(a.head_dim));
    const float* k = sm.kv + std::size_t(r) * a.head_dim;
    for (int g = 0; g < j.group; ++g) {
        const float* q = a.q + std::size_t(j.h0 + g) * a.head_dim;
        float score = 0.0f;
        for (int i = 0; i < a.head_dim; ++i) score += q[i] * k[i];
        score /= scale;
        sm.scores[g * kDecodeChunk + r] = score;
        if (a.probs) a.probs[(j.h0 + g) * decode_probs_row(a, j.n_keys) + j.s0 + r] = score;
    }
}

// The chunk's max (sum) for head g: the warps' results in increasing warp order.
__host__ __device__ inline float decode_chunk_max(const DecodeShared& sm, int g) {
    const unsigned warps = kDecodeThreads / kWarpSize;
    float m = sm.warp_mx[g * warps];
    for (unsigned w = 1; w < warps; ++w) m = warp_max_combine(m, sm.warp_mx[g * warps + w]);
    return m;
}
__host__ __device__ inline float decode_chunk_sum(const DecodeShared& sm, int g) {
    const unsigned warps = kDecodeThreads / kWarpSize;
    float l = sm.warp_sm[g * warps];
    for (unsigned w = 1; w < warps; ++w) l = warp_sum_combine(l, sm.warp_sm[g * warps + w]);
    return l;
}

// o[g, i] = sum_r e[g, r] v[r, i], r increasing; thread (g, i) also writes m and l once.
__host__ __device__ inline void decode_partial_out(const ThreadIndex& ix, const AttentionArgs& a,
                                                   const DecodeChunk& j, DecodeShared sm) {
    const int outputs = j.group * a.head_dim;
    for (int e = static_cast<int>(ix.thread.x); e < outputs;
         e += static_cast<int>(ix.block_dim.x)) {
        const int g = e / a.head_dim, i = e % a.head_dim;
        const float* p = sm.scores + g * kDecodeChunk;
        float o = 0.0f;
        for (int r = 0; r < j.n; ++r) o += p[r] * sm.kv[std::size_t(r) * a.head_dim + i];
        float* slot = decode_slot(a, j.h0 + g, j.c);
        slot[2 + i] = o;
        if (i == 0) {
            slot[0] = decode_chunk_max(sm, g);
            slot[1] = decode_chunk_sum(sm, g);
        }
    }
}

template <class Block>
__host__ __device__ void attention_decode_split_block(Block& b, const AttentionArgs& launched,
                                                      float* shared) {
    const AttentionArgs a = at_step_position(launched);
    const DecodeChunk j = decode_chunk(b.block_idx(), a);
    if (j.n <= 0) return;  // a graph's grid covers the whole cache: this chunk has no keys yet
    const DecodeShared sm = decode_shared(shared, a, j);
    const unsigned warps = kDecodeThreads / kWarpSize;
    auto part = b.template per_thread<float>(0.0f);
    b.phase([&](const ThreadIndex& ix) { decode_stage_rows(ix, a, j, a.cache_k, sm); });
    b.phase([&](const ThreadIndex& ix) { decode_scores(ix, a, j, sm); });
    for (int g = 0; g < j.group; ++g) {
        b.phase([&](const ThreadIndex& ix) {
            const int r = static_cast<int>(ix.thread.x);
            part(ix) = r < j.n ? sm.scores[g * kDecodeChunk + r] : -INFINITY;
        });
        b.warp_max(part);
        b.phase([&](const ThreadIndex& ix) {
            if (ix.thread.x % kWarpSize == 0)
                sm.warp_mx[g * warps + ix.thread.x / kWarpSize] = part(ix);
        });
    }
    // exp(score - chunk max), and the V rows over the K rows (the scores no longer need them).
    b.phase([&](const ThreadIndex& ix) {
        const int r = static_cast<int>(ix.thread.x);
        for (int g = 0; g < j.group && r < j.n; ++g) {
            float& e = sm.scores[g * kDecodeChunk + r];
            e = expf(e - decode_chunk_max(sm, g));
        }
        decode_stage_rows(ix, a, j, a.cache_v, sm);
    });
    for (int g = 0; g < j.group; ++g) {
        b.phase([&](const ThreadIndex& ix) {
            const int r = static_cast<int>(ix.thread.x);
            part(ix) = r < j.n ? sm.scores[g * kDecodeChunk + r] : 0.0f;
        });
        b.warp_sum(part);
        b.phase([&](const ThreadIndex& ix) {
            if (ix.thread.x % kWarpSize == 0)
                sm.warp_sm[g * warps + ix.thread.x / kWarpSize] = part(ix);
        });
    }
    b.phase([&](const ThreadIndex& ix) { decode_partial_out(ix, a, j, sm); });
}

// Head block.x: the chunks folded in increasing order (see above). No barrier, no shared memory.
__host__ __device__ inline void attention_decode_combine_thread(const ThreadIndex& ix,
                                                                const AttentionArgs& launched) {
    const AttentionArgs a = at_step_position(launched);
    const int h = static_cast<int>(ix.block.x), n_keys = a.pos0 + 1;
    const int chunks = static_cast<int>(decode_chunks(n_keys));
    float m = decode_slot(a, h, 0)[0];
    for (int c = 1; c < chunks; ++c) m = warp_max_combine(m, decode_slot(a, h, c)[0]);
    float l = 0.0f;
    for (int c = 0; c < chunks; ++c)
        l += decode_slot(a, h, c)[1] * expf(decode_slot(a, h, c)[0] - m);
    for (int i = static_cast<int>(ix.thread.x); i < a.head_dim;
         i += static_cast<int>(ix.block_dim.x)) {
        float o = 0.0f;
        for (int c = 0; c < chunks; ++c) {
            const float* slot = decode_slot(a, h, c);
            o += slot[2 + i] * expf(slot[0] - m);
        }
        a.out[std::size_t(h) * a.head_dim + i] = o / l;
    }
    if (!a.probs) return;
    float* row = a.probs + h * decode_probs_row(a, n_keys);
    for (int s = static_cast<int>(ix.thread.x); s < n_keys; s += static_cast<int>(ix.block_dim.x))
        row[s] = expf(row[s] - m) / l;
}

}  // namespace kvs::kern
