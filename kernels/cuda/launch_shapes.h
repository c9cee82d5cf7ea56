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
#include "kernels/cuda/fused_decode.cuh"
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
constexpr std::size_t kMaxSharedBytes = kAttnShared;

// Throws std::logic_error naming `kernel` for a shape cudaLaunchKernel would reject (more than
// 1024 threads a block, a grid y/z above 65535, an empty grid, shared memory over kMaxSharedBytes).
// The emulator and the CPU shim check every launch with it.
void check_launch_shape(const LaunchShape& s, const char* kernel);

// Threads per block of the kernels whose block size may vary; the others follow from their data
// layout (the tiled matmul's kTile x kTile tiles, attention's one key per thread of a chunk, the
// fused decode kernels' warps, and the one-thread-per-element gathers, where it changes nothing
// but the grid). The backends launch the defaults; `kvscope-cli kernels` runs every variant
// (block_variants) against the reference.
struct BlockSizes {
    unsigned rmsnorm = kRmsThreads;              // a power of two, at most kRmsSlots
    unsigned layernorm = kLayerNormThreads;      // a power of two, at most kLayerNormThreads
    unsigned matvec_rows = 0;                    // rows per block, one warp each; 0: matvec_shape's
    unsigned attention = kAttnThreads;           // decode's combine: a power of two
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
// rows 0: kMatvecRows a block, halved (down to 1) while the grid has fewer than
// kMatvecMinBlocks blocks, so that a small output still spreads over the GPU.
constexpr unsigned kMatvecMinBlocks = 264;  // 2 per SM of an H100
LaunchShape matvec_shape(int d, unsigned rows = 0);
LaunchShape matmul_tiled_shape(int T, int d);
LaunchShape rope_shape(int T, int dim);
LaunchShape kv_append_shape(int T, int kv_dim);
inline bool attention_uses_decode(int T) {
    return T == 1;
}
// Prefill (flash-style): grid (T, n_kv_heads), one chunk of keys in shared memory, any number of
// keys. Both attention shapes throw kvs::Error when not even one key of a group's heads fits in
// shared memory (head_dim x heads per kv head far beyond any model's).
LaunchShape attention_prefill_shape(int T, int n_heads, int n_kv_heads, int head_dim);
// Decode: the split kernel's grid (n_kv_heads, split blocks: the chunks of n_keys keys, at most
// about kSplitBlocks blocks in all, each then taking several chunks) and the combine kernel's
// (n_heads). A graph's split grid is sized for the most keys its replays will see.
LaunchShape attention_decode_split_shape(int n_keys, int n_heads, int n_kv_heads, int head_dim);
LaunchShape attention_decode_combine_shape(int n_heads, unsigned threads = kAttnThreads);
// The fused decode kernels (fused_decode.cuh): norm_qkv over the row pairs of [q | k | v], the
// others over their output rows, kFusedWarps a block; attention as decode split.
LaunchShape fused_qkv_shape(int dim, int kv_dim);
// `normed_dim`: the row the kernel RMS-normalises (staged in shared memory), 0 for none.
LaunchShape fused_rows_shape(int rows, int normed_dim = 0);
LaunchShape fused_attention_shape(int n_keys, int n_heads, int n_kv_heads, int head_dim);
// Floats of decode attention's partial results (AttentionArgs::partial) for every key a cache of
// `cache_floats` floats ([capacity, n_kv_heads * head_dim]) holds: sized once per cache.
std::size_t decode_partial_floats_for_cache(std::size_t cache_floats, int n_heads, int n_kv_heads,
                                            int head_dim);
LaunchShape elementwise_shape(std::size_t n, unsigned threads = kElementwiseThreads);

}  // namespace kvs::kern
