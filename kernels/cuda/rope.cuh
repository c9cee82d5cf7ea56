#pragma once
// RoPE as run.c applies it: adjacent pairs (i, i+1) of each head are rotated by the angle
// pos * inv_freq[(i mod head_dim) / 2] (run.c's 10000^(-(i mod head_dim) / head_dim) for a
// llama2.c model; core/model/rope_frequencies.h works the table out). q has dim columns, k only
// kv_dim (GQA), so pairs past kv_dim rotate q alone.
// Launch: grid (T, ceil(dim / 2 / kRopeThreads)), block kRopeThreads; one thread per pair of q.
#include <math.h>

#include <cstddef>

#include "kernels/cuda/portability.cuh"

namespace kvs::kern {

constexpr unsigned kRopeThreads = 128;

struct RopeArgs {
    float* q;  // [T, dim]
    float* k;  // [T, kv_dim]
    int T;
    int pos0;
    int dim;
    int kv_dim;
    int head_dim;
    const float* inv_freq;        // [head_dim / 2]
    const int* pos_at = nullptr;  // in a captured graph: pos0 from device memory (portability.cuh)
};

__host__ __device__ inline void rotate_pair(float* v, float c, float s) {
    const float v0 = v[0], v1 = v[1];
    v[0] = v0 * c - v1 * s;
    v[1] = v0 * s + v1 * c;
}

__host__ __device__ inline void rope_thread(const ThreadIndex& ix, const RopeArgs& launched) {
    const RopeArgs a = at_step_position(launched);
    const int t = static_cast<int>(ix.block.x);
    const int i = 2 * static_cast<int>(ix.block.y * ix.block_dim.x + ix.thread.x);
    if (t >= a.T || i >= a.dim) return;
    const float angle = (a.pos0 + t) * a.inv_freq[(i % a.head_dim) / 2];
    const float c = cosf(angle), s = sinf(angle);
    rotate_pair(a.q + std::size_t(t) * a.dim + i, c, s);
    if (i < a.kv_dim) rotate_pair(a.k + std::size_t(t) * a.kv_dim + i, c, s);
}

}  // namespace kvs::kern
