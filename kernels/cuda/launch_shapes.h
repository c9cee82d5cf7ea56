#pragma once
// Grid, block and shared memory of every kernel, and which kernel an op uses. Both the CUDA
// backend and the emulated one launch through these, so the emulator runs the kernels over
// exactly the shapes the GPU gets. Host C++; no CUDA needed.
#include <cstddef>
#include <string>
#include <vector>

#include "core/model/backend.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/layernorm.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/portability.cuh"
#include "kernels/cuda/rmsnorm.cuh"

namespace kvs::kern {

struct LaunchShape {
    Dim3 grid;
    Dim3 block;
    std::size_t shared_bytes = 0;  // dynamic shared memory
};

// Shared memory a block may use without opting in to more (every architecture since sm_20).
constexpr std::size_t kMaxSharedBytes = 48 * 1024;

// Throws std::logic_error naming `kernel` for a shape cudaLaunchKernel would reject (more than
// 1024 threads a block, a grid y/z above 65535, an empty grid, shared memory over kMaxSharedBytes).
// The emulator and the CPU shim check every launch with it.
void check_launch_shape(const LaunchShape& s, const char* kernel);

// Threads per block of the kernels whose block size may vary; the others follow from their data
// layout (the tiled matmul's kTile x kTile tiles, decode attention's one key per thread, and the
// one-thread-per-element gathers, where it changes nothing but the grid). The backends launch the
// defaults; `kvscope-cli kernels` runs every variant (block_variants) against the reference.
struct BlockSizes {
    unsigned rmsnorm = kRmsThreads;              // a power of two, at most kRmsThreads (shared)
    unsigned layernorm = kLayerNormThreads;      // a power of two, at most kLayerNormThreads
    unsigned matvec_rows = kMatvecRows;          // output rows per block, one warp each
    unsigned attention = kAttnThreads;           // prefill, and decode's combine: a power of two
    unsigned elementwise = kElementwiseThreads;  // swiglu, gelu, add
};
struct BlockVariant {
    std::string name;  // e.g. "rmsnorm 64 threads"; "*" marks the default
    BlockSizes sizes;
};
// The variants of the kernel an op runs at T rows (none for an op without a variable block).
std::vector<BlockVariant> block_variants(Op op, int T);

LaunchShape embed_shape(int T, int dim);
LaunchShape rmsnorm_shape(int T, unsigned threads = kRmsThreads);
LaunchShape layernorm_shape(int T, unsigned threads = kLayerNormThreads);
// Decode's single row goes to the matrix-vector kernel, anything taller to the tiled one.
inline bool matmul_uses_matvec(int T) {
    return T == 1;
}
LaunchShape matvec_shape(int d, unsigned rows = kMatvecRows);
LaunchShape matmul_tiled_shape(int T, int d);
LaunchShape rope_shape(int T, int dim);
LaunchShape kv_append_shape(int T, int kv_dim);
inline bool attention_uses_decode(int T) {
    return T == 1;
}
// Throws kvs::Error when the scores of one block do not fit in shared memory (a context far longer
// than the llama2.c models have).
LaunchShape attention_prefill_shape(int T, int pos0, int n_heads, unsigned threads = kAttnThreads);
// Decode: the split kernel's grid (n_kv_heads, chunks of keys) and the combine kernel's (n_heads).
// The split one throws kvs::Error when a chunk's K rows do not fit in shared memory (head_dim
// above about 180) or the keys need more than 65535 chunks.
LaunchShape attention_decode_split_shape(int pos0, int n_heads, int n_kv_heads, int head_dim);
LaunchShape attention_decode_combine_shape(int n_heads, unsigned threads = kAttnThreads);
// Floats of decode attention's partial results (AttentionArgs::partial) for every key a cache of
// `cache_floats` floats ([capacity, n_kv_heads * head_dim]) holds: sized once per cache.
std::size_t decode_partial_floats_for_cache(std::size_t cache_floats, int n_heads, int n_kv_heads,
                                            int head_dim);
LaunchShape elementwise_shape(std::size_t n, unsigned threads = kElementwiseThreads);

}  // namespace kvs::kern
