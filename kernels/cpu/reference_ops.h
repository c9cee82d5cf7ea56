#pragma once
// The plain ops, loop for loop in llama2.c's run.c arithmetic order: the readable definition of
// each op, and what tests/kernels/test_cpu_ops.cpp checks the fast ops against. Shapes as in
// core/model/backend.h; all float32, row-major, host memory.
#include <cstddef>

namespace kvs::ref {

// out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * w        out, x: [T, dim], w: [dim]
void rmsnorm(float* out, const float* x, const float* w, int T, int dim, float eps);
// out[t, i] = sum_j w[i, j] * x[t, j]  x: [T, n], w: [d, n], out: [T, d]
void matmul(float* out, const float* x, const float* w, int T, int n, int d);
// RoPE on adjacent pairs for positions pos0..pos0+T-1, pair p of a head turned by
// pos * inv_freq[p].   q: [T, dim], k: [T, kv_dim], inv_freq: [head_dim / 2]
void rope(float* q, float* k, int T, int pos0, int dim, int kv_dim, int head_dim,
          const float* inv_freq);
// GQA attention over cache rows 0..pos0+T-1: causal (query t sees keys 0..pos0+t), or, with
// causal false, every query sees every key (an encoder's attention).
// q, out: [T, n_heads * head_dim]; k_cache, v_cache: [>= pos0 + T, n_kv_heads * head_dim];
// probs (may be null): [n_heads, T, pos0 + T], masked cells 0.
void attention(float* out, const float* q, const float* k_cache, const float* v_cache, float* probs,
               int T, int pos0, int n_heads, int n_kv_heads, int head_dim, bool causal = true);
// h1 = silu(h1) * h3                   h1, h3: [n]
void swiglu(float* h1, const float* h3, std::size_t n);
// x += y                               x, y: [n]
void add(float* x, const float* y, std::size_t n);

// GPT-2's ops. The CPU backend runs these for both of its paths: they touch each element a few
// times, next to matmuls that touch each weight once per row, and have no faster form there.
// out[t] = (x[t] - mean) / sqrt(var + eps) * w + b, mean and var over dim in double (as
// llama.cpp's ggml_norm; torch's LayerNorm agrees to float rounding).
// out, x: [T, dim], w, b: [dim]
void layernorm(float* out, const float* x, const float* w, const float* b, int T, int dim,
               float eps);
// h = 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3)))      h: [n] (GPT-2's "gelu_new")
void gelu(float* h, std::size_t n);

}  // namespace kvs::ref
