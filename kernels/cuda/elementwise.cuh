#pragma once
// One thread per element: SwiGLU (h1 = silu(h1) * h3), GPT-2's GELU (h = gelu(h), in place), the
// residual add (x += y), a bias added to every row (x[t, :] += b: y repeated every y_len
// elements), and a compact matrix widened to float32 (for cuBLAS, which multiplies float32).
// Launch: grid ceil(n / kElementwiseThreads), block kElementwiseThreads.
#include <math.h>

#include <cstddef>

#include "kernels/cuda/portability.cuh"
#include "kernels/cuda/weight_dot.cuh"

namespace kvs::kern {

constexpr unsigned kElementwiseThreads = 256;

__host__ __device__ inline std::size_t global_thread(const ThreadIndex& ix) {
    return std::size_t(ix.block.x) * ix.block_dim.x + ix.thread.x;
}

struct SwigluArgs {
    float* h1;        // [n], overwritten with silu(h1) * h3
    const float* h3;  // [n]
    std::size_t n;
};

// silu(g) * u, as run.c writes it (the fused decode kernel's SwiGLU calls this too).
__host__ __device__ inline float silu_times(float g, float u) {
    g *= 1.0f / (1.0f + expf(-g));
    return g * u;
}

__host__ __device__ inline void swiglu_thread(const ThreadIndex& ix, const SwigluArgs& a) {
    const std::size_t i = global_thread(ix);
    if (i >= a.n) return;
    a.h1[i] = silu_times(a.h1[i], a.h3[i]);
}

struct GeluArgs {
    float* h;  // [n], overwritten with gelu(h)
    std::size_t n;
};

// The tanh form GPT-2 was trained with ("gelu_new"), as ref::gelu writes it, not erf's exact GELU.
__host__ __device__ inline void gelu_thread(const ThreadIndex& ix, const GeluArgs& a) {
    const std::size_t i = global_thread(ix);
    if (i >= a.n) return;
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    const float v = a.h[i];
    a.h[i] = 0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
}

struct AddArgs {
    float* x;        // [n]
    const float* y;  // [n], or [y_len] repeated (a bias: x is [n / y_len, y_len])
    std::size_t n;
    std::size_t y_len = 0;  // 0: y is as long as x
};

__host__ __device__ inline void add_thread(const ThreadIndex& ix, const AddArgs& a) {
    const std::size_t i = global_thread(ix);
    if (i < a.n) a.x[i] += a.y[a.y_len ? i % a.y_len : i];
}

struct WidenArgs {
    float* out;   // [n]
    MatrixRef w;  // [n] values of any kind (weight_dot.cuh)
    std::size_t n;
};

__host__ __device__ inline void widen_thread(const ThreadIndex& ix, const WidenArgs& a) {
    const std::size_t i = global_thread(ix);
    if (i < a.n) a.out[i] = weight_at(a.w, i, 1, 0);  // element i: row i of an [n, 1] view
}

}  // namespace kvs::kern
