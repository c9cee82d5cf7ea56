#pragma once
// The CPU backend's ops, written for speed but kept readable: lane sums (vec_math.h) that the
// compiler vectorizes without -ffast-math, a register-tiled and cache-blocked matmul, optional
// threads (thread_pool.h). Each op gives the same value for a row whether it is computed alone, in
// a batch or on any number of threads; reference_ops.h holds the plain versions they are tested
// against. Shapes as in core/model/backend.h; all float32, row-major, host memory.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvs {
enum class GgmlType : std::uint32_t;  // core/files/gguf_file.h
}

namespace kvs::cpu {

class ThreadPool;

// out[t, i] = sum_j w[i, j] * x[t, j]   x: [T, n], w: [d, n], out: [T, d]
// pool: null, or threads that share the rows of a large enough matmul (thread_pool.h).
void matmul(float* out, const float* x, const float* w, int T, int n, int d, ThreadPool* pool);

// The same with w [d, n] in a compact type (core/model/compact_weights.h: F16, BF16, Q8_0, Q4_0 or
// a K-quant, n whole blocks of it; F32 too), widened to float32 as it is read: every element equals
// matmul() on the dequantised matrix, bit for bit. (The CPU backend sends Q8_0, Q4_0 and the
// K-quants to quant_dot.h's integer dot products instead, unless its dot path is float.)
void matmul_compact(float* out, const float* x, GgmlType type, const unsigned char* w, int T, int n,
                    int d, ThreadPool* pool);

// GQA attention, as ref::attention (causal, or every key); probs may be null.
// scratch: reused between calls, grown to one block per thread of the pool.
void attention(float* out, const float* q, const float* k_cache, const float* v_cache, float* probs,
               int T, int pos0, int n_heads, int n_kv_heads, int head_dim, ThreadPool* pool,
               std::vector<float>& scratch, bool causal);
// The same over keys named one by one: key s (s < pos0 + T) has its K row at k_rows[s] and its V
// row at v_rows[s], [n_kv_heads * head_dim] each (a paged cache read in place). The same sums in
// the same order as attention() over those rows laid out contiguously, so the same bits.
void attention_rows(float* out, const float* q, const float* const* k_rows,
                    const float* const* v_rows, float* probs, int T, int pos0, int n_heads,
                    int n_kv_heads, int head_dim, ThreadPool* pool, std::vector<float>& scratch,
                    bool causal);

// out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * w         out, x: [T, dim], w: [dim]
// (the squares summed in double, as ggml's rms_norm sums them: vec_math.h's sum_squares)
void rmsnorm(float* out, const float* x, const float* w, int T, int dim, float eps);
// h1 = silu(h1) * h3                    h1, h3: [n]
void swiglu(float* h1, const float* h3, std::size_t n);
// x += y                                x, y: [n]
void add(float* x, const float* y, std::size_t n);

// RoPE with cos/sin looked up instead of recomputed (pow, cos and sin per pair per token cost more
// than the rotation): the table holds, for every position seen so far and every pair in a head,
// the values run.c computes each time, by the same float formula. Another model's frequencies
// start the table over.
class RopeTable {
  public:
    // q: [T, dim], k: [T, kv_dim], positions pos0..pos0+T-1, inv_freq: [head_dim / 2]
    void apply(float* q, float* k, int T, int pos0, int dim, int kv_dim, int head_dim,
               const float* inv_freq);

  private:
    void grow(int positions);
    int positions_ = 0;
    std::vector<float> inv_freq_;   // [head_dim / 2]: what the table was made for
    std::vector<float> cos_, sin_;  // [positions, head_dim / 2]
};

}  // namespace kvs::cpu
