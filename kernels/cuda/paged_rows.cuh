#pragma once
// A paged KV cache's addressing on the device, as vLLM's PagedAttention reads it: a sequence's
// position p lives in logical block p / block_size, which its block table maps to a physical
// block of the pool; the row is that block's row p % block_size. The host's twin is
// core/model/kv_blocks.h's for_each_block_run (the same arithmetic, a run at a time).
#include <cstddef>

#include "kernels/cuda/portability.cuh"

namespace kvs::kern {

// table: [logical blocks] physical block per logical one; the pool row of position p.
__host__ __device__ inline std::size_t paged_row(const int* table, int block_size, int p) {
    return std::size_t(table[p / block_size]) * block_size + std::size_t(p % block_size);
}

}  // namespace kvs::kern
