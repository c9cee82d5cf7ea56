#pragma once
// Causal attention over the KV cache, scale 1/sqrt(head_dim), GQA: query head h reads kv head
// h / (n_heads / n_kv_heads). Keys are taken in chunks (attention_chunk_keys of them: one per
// thread of a block of kChunkThreads); one chunk's pass (chunk_pass below) stages its K rows in
// shared memory, scores them for every query head of its kv head, takes the chunk's max m and
// sum l of exp(score - m), stages the V rows and leaves the exponentials beside them. Then:
// - decode (T == 1), split over the keys (flash-decoding), two kernels:
//   1. split: grid (n_kv_heads, split blocks), block kChunkThreads. Block (kvh, b) takes chunks
//      b, b + gridDim.y, ... of the keys (a grid that does not grow with the keys: chunks past
//      the keys cost nothing) and leaves per head and chunk in `partial` [m, l, o[0..head_dim)],
//      o = sum exp(score - m) v; the raw scores go to the probs row when probs are wanted.
//   2. combine: grid n_heads, block kAttnThreads, no shared memory. Each thread folds the chunks
//      in increasing order: M = max m_c, L = sum l_c exp(m_c - M); out = sum o_c exp(m_c - M) / L;
//      probs p = exp(score - M) / L.
//   The fused decode kernel (fused_decode.cuh) runs the same split, and the last block of each kv
//   head to finish runs the same combine (grid_order.cuh): one launch.
// - prefill (T > 1), flash-style: grid (T, n_kv_heads), block kChunkThreads. Block (t, kvh) walks
//   the visible keys of query row t chunk by chunk, folding each chunk into a running max, sum
//   and output in shared memory (rescaled by exp(old max - new max)); the raw scores go to the
//   probs row and are normalised at the end. Shared memory holds one chunk, whatever the
//   number of keys: no limit on the context.
// A paged cache (AttentionArgs::block_table, vLLM's paged_attention) is read in place: only where
// a key's row is staged from differs (key_row), so its bits are the contiguous cache's.
// Every order is fixed, so the bits are the same at every run, on the emulator, the CPU shim and
// the device. Dot products and weighted sums are explicit fmaf.
// The softmax here is not core/model/softmax.h's: it is folded into the chunked pass (a running
// max and sum, rescaled chunk by chunk), inside __host__ __device__ bodies that run on the GPU;
// the tests hold its weights to the reference op, which calls the one softmax.
#include <math.h>

#include <cstddef>

#include "kernels/cuda/block_phases.cuh"
#include "kernels/cuda/grid_order.cuh"
#include "kernels/cuda/paged_rows.cuh"

namespace kvs::kern {

constexpr unsigned kAttnThreads = 128;  // decode's combine: a power of two
constexpr unsigned kChunkThreads = 64;  // whole warps (warp_max, warp_sum); one key each
constexpr unsigned kSplitBlocks = 256;  // decode split blocks in all, about: 2 per SM of an H100
constexpr std::size_t kAttnShared = 48 * 1024;  // per block: launch_shapes.h's kMaxSharedBytes

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
    float* partial;  // decode only: [n_heads, decode_chunks(...), head_dim + 2] scratch
    // Decode only, for a launch captured into a CUDA Graph and replayed at every position:
    // pos0 read from device memory (portability.cuh), and probs rows probs_stride floats apart
    // (0: n_keys apart), a stride fixed when the graph was recorded.
    const int* pos_at = nullptr;
    int probs_stride = 0;
    // 1: query row t sees keys 0..pos0+t (a decoder's causal mask); 0: every key (an encoder's).
    // A decode row (T == 1) sees every key either way.
    int causal = 1;
    // A paged cache read in place (vLLM's PagedAttention), when block_table is set: cache_k and
    // cache_v are one layer of a block pool [n_blocks * block_size, kv_dim], and key s is at
    // position s below `sinks`, s + skip from there (a window past its sinks); position p's row
    // is block_table[p / block_size] * block_size + p % block_size (paged_row). sink_k, when set:
    // the sinks' K rows [sinks, kv_dim], moved by RoPE, read in place of the pool's.
    const int* block_table = nullptr;  // [the sequence's blocks]: physical block per logical one
    int block_size = 0;
    int sinks = 0;
    int skip = 0;
    const float* sink_k = nullptr;
};

// Key s's row of `cache` (cache_k when `keys`, else cache_v): row s of a contiguous cache, or the
// row its position's block holds in a paged one.
__host__ __device__ inline const float* key_row(const AttentionArgs& a, const float* cache,
                                                bool keys, int s) {
    const std::size_t kv_dim = std::size_t(a.n_kv_heads) * a.head_dim;
    if (!a.block_table) return cache + std::size_t(s) * kv_dim;
    if (keys && a.sink_k && s < a.sinks) return a.sink_k + std::size_t(s) * kv_dim;
    const int p = s < a.sinks ? s : s + a.skip;
    return cache + paged_row(a.block_table, a.block_size, p) * kv_dim;
}

// ---- one chunk of keys ----
// Keys per chunk: kChunkThreads, halved until one chunk's K rows (padded), scores, the warps'
// maxima and sums and, for the flash prefill, the running output of every head of the group fit
// in kAttnShared. 0 when not even one key does (head_dim x group far beyond any model's).
__host__ __device__ inline std::size_t chunk_shared_floats(unsigned keys, int group, int head_dim,
                                                           bool flash) {
    const std::size_t warps = kChunkThreads / kWarpSize;
    // + 1: the fused kernel's last-ticket flag (fused_decode.cuh), at the end of the chunk's part
    std::size_t f =
        std::size_t(keys) * (head_dim + 1) + std::size_t(group) * (keys + 2 * warps) + 1;
    if (flash) f += std::size_t(group) * (head_dim + 2);  // O [group, head_dim], M, L [group]
    return f;
}
__host__ __device__ inline unsigned attention_chunk_keys(int group, int head_dim, bool flash) {
    for (unsigned keys = kChunkThreads; keys > 0; keys /= 2)
        if (chunk_shared_floats(keys, group, head_dim, flash) * sizeof(float) <= kAttnShared)
            return keys;
    return 0;
}
__host__ __device__ inline int attention_group(const AttentionArgs& a) {
    return a.n_heads / a.n_kv_heads;
}

// Query heads h0..h0+group-1 (all on kv head kvh) against keys s0..s0+n-1.
struct KeyChunk {
    int kvh, h0, group;
    int c, s0, n;
};

__host__ __device__ inline KeyChunk key_chunk(const AttentionArgs& a, int kvh, int c, int n_keys,
                                              unsigned keys_per_chunk) {
    const int group = attention_group(a), per = static_cast<int>(keys_per_chunk);
    const int s0 = c * per, left = n_keys - s0;
    return {kvh, kvh * group, group, c, s0, left < per ? left : per};
}

struct ChunkShared {
    float* kv;       // [keys_per_chunk, head_dim + 1]: K rows, then V rows (padded: no bank clash)
    float* scores;   // [group, keys_per_chunk]: scores, then exp(score - chunk max)
    float* warp_mx;  // [group, warps]
    float* warp_sm;  // [group, warps]
    unsigned keys;   // keys_per_chunk
};

__host__ __device__ inline ChunkShared chunk_shared(float* base, unsigned keys, int group,
                                                    int head_dim) {
    const unsigned warps = kChunkThreads / kWarpSize;
    float* scores = base + std::size_t(keys) * (head_dim + 1);
    float* warp_mx = scores + std::size_t(group) * keys;
    return {base, scores, warp_mx, warp_mx + std::size_t(group) * warps, keys};
}

// kv[r, i] = key s0 + r's row of `cache` (key_row), kv head kvh, float i; rows head_dim + 1
// apart: thread t copies floats t, t + threads, ... of the chunk (consecutive threads,
// consecutive floats: coalesced within a row, and within a block of a paged cache).
__host__ __device__ inline void stage_rows(const ThreadIndex& ix, const AttentionArgs& a,
                                           const KeyChunk& j, const float* cache, bool keys,
                                           ChunkShared sm) {
    const int total = j.n * a.head_dim;
    for (int e = static_cast<int>(ix.thread.x); e < total; e += static_cast<int>(ix.block_dim.x)) {
        const int r = e / a.head_dim, i = e % a.head_dim;
        sm.kv[r * (a.head_dim + 1) + i] = key_row(a, cache, keys, j.s0 + r)[j.kvh * a.head_dim + i];
    }
}

// One thread per key of the chunk: its score for every head of the group (q.k / sqrt(head_dim),
// i increasing); raw scores also go to the heads' probs rows (row h at probs + h * stride).
__host__ __device__ inline void chunk_scores(const ThreadIndex& ix, const AttentionArgs& a,
                                             const KeyChunk& j, const float* q_row, float* probs,
                                             std::size_t stride, ChunkShared sm) {
    const int r = static_cast<int>(ix.thread.x);
    if (r >= j.n) return;
    const float sqrt_d = sqrtf(static_cast<float>(a.head_dim));
    const float* k = sm.kv + std::size_t(r) * (a.head_dim + 1);
    for (int g = 0; g < j.group; ++g) {
        const float* q = q_row + std::size_t(j.h0 + g) * a.head_dim;
        float score = 0.0f;
        for (int i = 0; i < a.head_dim; ++i) score = fmaf(q[i], k[i], score);
        score /= sqrt_d;
        sm.scores[g * sm.keys + r] = score;
        if (probs) probs[(j.h0 + g) * stride + j.s0 + r] = score;
    }
}

// The chunk's max (sum) for head g: the warps' results in increasing warp order.
__host__ __device__ inline float chunk_max(const ChunkShared& sm, int g) {
    const unsigned warps = kChunkThreads / kWarpSize;
    float m = sm.warp_mx[g * warps];
    for (unsigned w = 1; w < warps; ++w) m = warp_max_combine(m, sm.warp_mx[g * warps + w]);
    return m;
}
__host__ __device__ inline float chunk_sum(const ChunkShared& sm, int g) {
    const unsigned warps = kChunkThreads / kWarpSize;
    float l = sm.warp_sm[g * warps];
    for (unsigned w = 1; w < warps; ++w) l = warp_sum_combine(l, sm.warp_sm[g * warps + w]);
    return l;
}

// o[g, i] of the chunk: sum_r exp(score_r - m) v[r, i], r increasing.
__host__ __device__ inline float chunk_output(const AttentionArgs& a, const KeyChunk& j,
                                              const ChunkShared& sm, int g, int i) {
    const float* p = sm.scores + g * sm.keys;
    float o = 0.0f;
    for (int r = 0; r < j.n; ++r) o = fmaf(p[r], sm.kv[std::size_t(r) * (a.head_dim + 1) + i], o);
    return o;
}

// One chunk, every thread of the block: afterwards sm holds the chunk's V rows, exp(score - m)
// per head, and the warps' maxima and sums (chunk_max, chunk_sum). `part` is a per-thread float.
template <class Block, class Part>
__host__ __device__ void chunk_pass(Block& b, const AttentionArgs& a, const KeyChunk& j,
                                    const float* q_row, float* probs, std::size_t stride,
                                    ChunkShared sm, Part& part) {
    const unsigned warps = kChunkThreads / kWarpSize;
    b.phase([&](const ThreadIndex& ix) { stage_rows(ix, a, j, a.cache_k, true, sm); });
    b.phase([&](const ThreadIndex& ix) { chunk_scores(ix, a, j, q_row, probs, stride, sm); });
    for (int g = 0; g < j.group; ++g) {
        b.phase([&](const ThreadIndex& ix) {
            const int r = static_cast<int>(ix.thread.x);
            part(ix) = r < j.n ? sm.scores[g * sm.keys + r] : -INFINITY;
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
            float& e = sm.scores[g * sm.keys + r];
            e = expf(e - chunk_max(sm, g));
        }
        stage_rows(ix, a, j, a.cache_v, false, sm);
    });
    for (int g = 0; g < j.group; ++g) {
        b.phase([&](const ThreadIndex& ix) {
            const int r = static_cast<int>(ix.thread.x);
            part(ix) = r < j.n ? sm.scores[g * sm.keys + r] : 0.0f;
        });
        b.warp_sum(part);
        b.phase([&](const ThreadIndex& ix) {
            if (ix.thread.x % kWarpSize == 0)
                sm.warp_sm[g * warps + ix.thread.x / kWarpSize] = part(ix);
        });
    }
}

// ---- decode: split over the keys, then combine ----
__host__ __device__ inline unsigned decode_chunk_keys(const AttentionArgs& a) {
    return attention_chunk_keys(attention_group(a), a.head_dim, false);
}
__host__ __device__ inline unsigned decode_chunks(int n_keys, unsigned keys_per_chunk) {
    return blocks_for(static_cast<unsigned long long>(n_keys), keys_per_chunk);
}
__host__ __device__ inline std::size_t decode_partial_floats(int n_heads, int n_keys, int head_dim,
                                                             unsigned keys_per_chunk) {
    return std::size_t(n_heads) * decode_chunks(n_keys, keys_per_chunk) *
           (std::size_t(head_dim) + 2);
}

// Floats between two heads' probs rows in decode.
__host__ __device__ inline std::size_t decode_probs_row(const AttentionArgs& a, int n_keys) {
    return a.probs_stride > 0 ? std::size_t(a.probs_stride) : std::size_t(n_keys);
}

// Head h's slot for chunk c of `chunks` in partial: [m, l, o[0..head_dim)].
__host__ __device__ inline float* decode_slot(const AttentionArgs& a, int h, int c, int chunks) {
    return a.partial + (std::size_t(h) * chunks + c) * (std::size_t(a.head_dim) + 2);
}

// o[g, i] into the chunk's slots; thread (g, i = 0) also writes m and l.
__host__ __device__ inline void decode_partial_out(const ThreadIndex& ix, const AttentionArgs& a,
                                                   const KeyChunk& j, int chunks,
                                                   const ChunkShared& sm) {
    const int outputs = j.group * a.head_dim;
    for (int e = static_cast<int>(ix.thread.x); e < outputs;
         e += static_cast<int>(ix.block_dim.x)) {
        const int g = e / a.head_dim, i = e % a.head_dim;
        float* slot = decode_slot(a, j.h0 + g, j.c, chunks);
        slot[2 + i] = chunk_output(a, j, sm, g, i);
        if (i == 0) {
            slot[0] = chunk_max(sm, g);
            slot[1] = chunk_sum(sm, g);
        }
    }
}

// Block (kvh, b): chunks b, b + gridDim.y, ... of the keys into their slots. Returns the number
// of chunks it did (the same for every thread).
template <class Block>
__host__ __device__ int attention_decode_split_chunks(Block& b, const AttentionArgs& a,
                                                      float* shared) {
    const int n_keys = a.pos0 + 1, kvh = static_cast<int>(b.block_idx().x);
    const unsigned per = decode_chunk_keys(a);
    const int chunks = static_cast<int>(decode_chunks(n_keys, per));
    const ChunkShared sm = chunk_shared(shared, per, attention_group(a), a.head_dim);
    auto part = b.template per_thread<float>(0.0f);
    int done = 0;
    const int step = static_cast<int>(b.grid_dim().y);
    for (int c = static_cast<int>(b.block_idx().y); c < chunks; c += step, ++done) {
        const KeyChunk j = key_chunk(a, kvh, c, n_keys, per);
        chunk_pass(b, a, j, a.q, a.probs, decode_probs_row(a, n_keys), sm, part);
        b.phase([&](const ThreadIndex& ix) { decode_partial_out(ix, a, j, chunks, sm); });
    }
    return done;
}

template <class Block>
__host__ __device__ void attention_decode_split_block(Block& b, const AttentionArgs& launched,
                                                      float* shared) {
    attention_decode_split_chunks(b, at_step_position(launched), shared);
}

// Head h's chunks folded in increasing order (see the top); `load` reads a slot value (a plain
// read, or one past the L1 cache when other blocks of the same grid wrote the slots).
template <class Load>
__host__ __device__ inline void attention_combine_head(const ThreadIndex& ix,
                                                       const AttentionArgs& a, int h,
                                                       const Load& load) {
    const int n_keys = a.pos0 + 1;
    const int chunks = static_cast<int>(decode_chunks(n_keys, decode_chunk_keys(a)));
    float m = load(decode_slot(a, h, 0, chunks));
    for (int c = 1; c < chunks; ++c) m = warp_max_combine(m, load(decode_slot(a, h, c, chunks)));
    float l = 0.0f;
    for (int c = 0; c < chunks; ++c) {
        const float* slot = decode_slot(a, h, c, chunks);
        l = fmaf(load(slot + 1), expf(load(slot) - m), l);
    }
    for (int i = static_cast<int>(ix.thread.x); i < a.head_dim;
         i += static_cast<int>(ix.block_dim.x)) {
        float o = 0.0f;
        for (int c = 0; c < chunks; ++c) {
            const float* slot = decode_slot(a, h, c, chunks);
            o = fmaf(load(slot + 2 + i), expf(load(slot) - m), o);
        }
        a.out[std::size_t(h) * a.head_dim + i] = o / l;
    }
    if (!a.probs) return;
    float* row = a.probs + h * decode_probs_row(a, n_keys);
    for (int s = static_cast<int>(ix.thread.x); s < n_keys; s += static_cast<int>(ix.block_dim.x))
        row[s] = expf(load(row + s) - m) / l;
}

// Head block.x. No barrier, no shared memory.
__host__ __device__ inline void attention_decode_combine_thread(const ThreadIndex& ix,
                                                                const AttentionArgs& launched) {
    const AttentionArgs a = at_step_position(launched);
    attention_combine_head(ix, a, static_cast<int>(ix.block.x), [](const float* p) { return *p; });
}

// ---- prefill: flash-style, one block per query row and kv head ----
struct FlashShared {
    ChunkShared chunk;
    float* o;  // [group, head_dim]: the running output, not yet divided by L
    float* m;  // [group]: the running max
    float* l;  // [group]: the running sum of exp(score - m)
};

__host__ __device__ inline FlashShared flash_shared(float* base, unsigned keys, int group,
                                                    int head_dim) {
    const ChunkShared c = chunk_shared(base, keys, group, head_dim);
    float* o = base + chunk_shared_floats(keys, group, head_dim, false);
    float* m = o + std::size_t(group) * head_dim;
    return {c, o, m, m + group};
}

// The chunk folded into the running state: o = o exp(M - M') + o_c exp(m_c - M'), M' = max(M,
// m_c). M and L move only in the next phase (flash_fold_max), after every o has read them.
__host__ __device__ inline void flash_fold_output(const ThreadIndex& ix, const AttentionArgs& a,
                                                  const KeyChunk& j, const FlashShared& sm) {
    const int outputs = j.group * a.head_dim;
    for (int e = static_cast<int>(ix.thread.x); e < outputs;
         e += static_cast<int>(ix.block_dim.x)) {
        const int g = e / a.head_dim, i = e % a.head_dim;
        const float mc = chunk_max(sm.chunk, g), mn = warp_max_combine(sm.m[g], mc);
        const float oc = chunk_output(a, j, sm.chunk, g, i);
        sm.o[e] = fmaf(sm.o[e], expf(sm.m[g] - mn), oc * expf(mc - mn));
    }
}
__host__ __device__ inline void flash_fold_max(const ThreadIndex& ix, const FlashShared& sm,
                                               int group) {
    for (int g = static_cast<int>(ix.thread.x); g < group; g += static_cast<int>(ix.block_dim.x)) {
        const float mc = chunk_max(sm.chunk, g), mn = warp_max_combine(sm.m[g], mc);
        sm.l[g] = fmaf(sm.l[g], expf(sm.m[g] - mn), chunk_sum(sm.chunk, g) * expf(mc - mn));
        sm.m[g] = mn;
    }
}

template <class Block>
__host__ __device__ void attention_prefill_block(Block& b, const AttentionArgs& a, float* shared) {
    const int t = static_cast<int>(b.block_idx().x), kvh = static_cast<int>(b.block_idx().y);
    const int group = attention_group(a), dim = a.n_heads * a.head_dim;
    // Keys 0..pos are visible to row t: up to its own position under the causal mask, every key
    // without it.
    const int n_keys = a.pos0 + a.T, pos = a.causal ? a.pos0 + t : n_keys - 1;
    const unsigned per = attention_chunk_keys(group, a.head_dim, true);
    const FlashShared sm = flash_shared(shared, per, group, a.head_dim);
    // Row t of head h's probs: [n_heads, T, n_keys]; head h at probs_t + h * stride.
    const std::size_t stride = std::size_t(a.T) * n_keys;
    float* probs_t = a.probs ? a.probs + std::size_t(t) * n_keys : nullptr;
    const float* q_row = a.q + std::size_t(t) * dim;
    b.phase([&](const ThreadIndex& ix) {
        for (int e = static_cast<int>(ix.thread.x); e < group * a.head_dim;
             e += static_cast<int>(ix.block_dim.x))
            sm.o[e] = 0.0f;
        for (int g = static_cast<int>(ix.thread.x); g < group;
             g += static_cast<int>(ix.block_dim.x)) {
            sm.m[g] = -INFINITY;
            sm.l[g] = 0.0f;
        }
    });
    auto part = b.template per_thread<float>(0.0f);
    const int chunks = static_cast<int>(decode_chunks(pos + 1, per));
    for (int c = 0; c < chunks; ++c) {
        const KeyChunk j = key_chunk(a, kvh, c, pos + 1, per);
        chunk_pass(b, a, j, q_row, probs_t, stride, sm.chunk, part);
        b.phase([&](const ThreadIndex& ix) { flash_fold_output(ix, a, j, sm); });
        b.phase([&](const ThreadIndex& ix) { flash_fold_max(ix, sm, group); });
    }
    // out = o / L; probs = exp(score - M) / L, masked cells 0.
    b.phase([&](const ThreadIndex& ix) {
        for (int e = static_cast<int>(ix.thread.x); e < group * a.head_dim;
             e += static_cast<int>(ix.block_dim.x)) {
            const int g = e / a.head_dim, i = e % a.head_dim;
            a.out[std::size_t(t) * dim + (kvh * group + g) * a.head_dim + i] = sm.o[e] / sm.l[g];
        }
        if (!probs_t) return;
        for (int g = 0; g < group; ++g) {
            float* row = probs_t + (kvh * group + g) * stride;
            for (int s = static_cast<int>(ix.thread.x); s < n_keys;
                 s += static_cast<int>(ix.block_dim.x))
                row[s] = s <= pos ? expf(row[s] - sm.m[g]) / sm.l[g] : 0.0f;
        }
    });
}

}  // namespace kvs::kern
