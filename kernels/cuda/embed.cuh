#pragma once
// Embedding gather: x[t, :] = table[tokens[t], :].
// Launch: grid (T, ceil(dim / kEmbedThreads)), block kEmbedThreads; one thread per element of x.
#include <cstddef>

#include "kernels/cuda/portability.cuh"
#include "kernels/cuda/weight_dot.cuh"

namespace kvs::kern {

constexpr unsigned kEmbedThreads = 256;

struct EmbedArgs {
    float* x;           // [T, dim]
    MatrixRef table;    // [vocab, dim]: float32, or f16/bf16 widened as read
    const int* tokens;  // [T], where the kernel runs (device memory on a GPU)
    int T;
    int dim;
};

__host__ __device__ inline void embed_thread(const ThreadIndex& ix, const EmbedArgs& a) {
    const int t = static_cast<int>(ix.block.x);
    const int j = static_cast<int>(ix.block.y * ix.block_dim.x + ix.thread.x);
    if (t >= a.T || j >= a.dim) return;  // the last block of a row sticks out past dim
    a.x[std::size_t(t) * a.dim + j] = weight_at(a.table, std::size_t(a.tokens[t]), a.dim, j);
}

}  // namespace kvs::kern
