#pragma once
// KV append: cache[pos0 + t, :] = new[t, :] for K and V, or into the rows a block table gives
// positions pos0 + t in a paged cache; one thread per element of [T, kv_dim].
// Launch: grid ceil(T * kv_dim / kKvAppendThreads), block kKvAppendThreads.
#include <cstddef>

#include "kernels/cuda/paged_rows.cuh"
#include "kernels/cuda/portability.cuh"

namespace kvs::kern {

constexpr unsigned kKvAppendThreads = 256;

struct KvAppendArgs {
    float* cache_k;  // [capacity, kv_dim]
    float* cache_v;  // [capacity, kv_dim]
    const float* k;  // [T, kv_dim]
    const float* v;  // [T, kv_dim]
    int pos0;
    int T;
    int kv_dim;
    const int* pos_at = nullptr;  // in a captured graph: pos0 from device memory (portability.cuh)
    // A paged cache (vLLM's reshape_and_cache), when set: cache_k and cache_v are one layer of a
    // block pool [n_blocks * block_size, kv_dim], position p's row found through the table
    // (paged_row).
    const int* block_table = nullptr;
    int block_size = 0;
};

__host__ __device__ inline void kv_append_thread(const ThreadIndex& ix,
                                                 const KvAppendArgs& launched) {
    const KvAppendArgs a = at_step_position(launched);
    const std::size_t e = std::size_t(ix.block.x) * ix.block_dim.x + ix.thread.x;
    if (e >= std::size_t(a.T) * a.kv_dim) return;
    // Contiguous rows: element e of the new block lands e past the first appended row. Paged:
    // row t of the new block lands in the row its position's block holds.
    const int t = static_cast<int>(e / a.kv_dim);
    const std::size_t dst =
        a.block_table ? paged_row(a.block_table, a.block_size, a.pos0 + t) * a.kv_dim + e % a.kv_dim
                      : std::size_t(a.pos0) * a.kv_dim + e;
    a.cache_k[dst] = a.k[e];
    a.cache_v[dst] = a.v[e];
}

}  // namespace kvs::kern
