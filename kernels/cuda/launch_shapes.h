#pragma once
// Grid, block and shared memory of every kernel, and which kernel an op uses. Both the CUDA
// backend and the emulated one launch through these, so the emulator runs the kernels over
// exactly the shapes the GPU gets. Host C++; no CUDA needed.
#include <cstddef>

#include "kernels/cuda/portability.cuh"

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

LaunchShape embed_shape(int T, int dim);
LaunchShape rmsnorm_shape(int T);
// Decode's single row goes to the matrix-vector kernel, anything taller to the tiled one.
inline bool matmul_uses_matvec(int T) {
    return T == 1;
}
LaunchShape matvec_shape(int d);
LaunchShape matmul_tiled_shape(int T, int d);
LaunchShape rope_shape(int T, int dim);
LaunchShape kv_append_shape(int T, int kv_dim);
inline bool attention_uses_decode(int T) {
    return T == 1;
}
// Throws kvs::Error when the scores of one block do not fit in shared memory (a context far longer
// than the llama2.c models have).
LaunchShape attention_prefill_shape(int T, int pos0, int n_heads);
// Decode: the split kernel's grid (n_kv_heads, chunks of keys) and the combine kernel's (n_heads).
// The split one throws kvs::Error when a chunk's K rows do not fit in shared memory (head_dim
// above about 180) or the keys need more than 65535 chunks.
LaunchShape attention_decode_split_shape(int pos0, int n_heads, int n_kv_heads, int head_dim);
LaunchShape attention_decode_combine_shape(int n_heads);
// Floats of decode attention's partial results (AttentionArgs::partial) for every key a cache of
// `cache_floats` floats ([capacity, n_kv_heads * head_dim]) holds: sized once per cache.
std::size_t decode_partial_floats_for_cache(std::size_t cache_floats, int n_heads, int n_kv_heads,
                                            int head_dim);
LaunchShape elementwise_shape(std::size_t n);

}  // namespace kvs::kern
