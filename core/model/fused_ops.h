#pragma once
// Fused decode kernels (docs/cuda.md): a backend that offers them (Backend::fused()) runs one
// sequence's cached decode step in 5 kernels a layer and 1 a token, each doing what several
// Backend ops do one after another, with the same arithmetic in the same order, so the results
// are those ops' bit for bit. What each one does is written in the op-by-op path's terms:
//   norm_qkv      [x = embedding row of the token (layer 0)]; xb = rmsnorm(x) * norm;
//                 q = xb wq (+ bq), k = xb wk (+ bk), v = xb wv (+ bv); RoPE at pos on q and k;
//                 cache row pos = k, v; q, k, v rows also to their captures when given
//   attention     Backend::attention of one query row at pos (decode), probs as it writes them;
//                 the output row also to its capture when given
//   matvec_add    x += W in
//   norm_gate_up  h = silu(xb w1) * (xb w3), xb = rmsnorm(x) * norm
//   norm_logits   logits = (rmsnorm(x) * norm) W
// core/model/fused_decode.cpp is the forward pass written in them. Like an op, each may be
// recorded into a CUDA Graph (core/model/step_graphs.h): while recording, the token and the
// position come from the step's device copy.
#include <cstddef>

#include "core/model/backend.h"

namespace kvs {

// A weight matrix [rows, n] on the backend: its float32 values, or its compact bytes (the copy a
// backend made with Backend::adopt_compact) in `type` (core/files/gguf_file.h's; {} is F32).
// (Only declared here, not included: the CUDA backend includes this and is C++17.)
struct FusedMatrix {
    DeviceSpan floats;
    GgmlType type{};
    const unsigned char* bytes = nullptr;
};

class FusedOps {
  public:
    virtual ~FusedOps() = default;
    // Off: decode steps run op by op (KVSCOPE_CUDA_FUSED=0 starts a backend off).
    virtual bool fused_on() const = 0;
    virtual void set_fused_on(bool on) = 0;
    // Whether the kernels read weights kept in `type` (compact matrices, --weights).
    virtual bool fused_reads(GgmlType type) const = 0;
    // Whether the kernels take a model of these shapes (one attention chunk must fit).
    virtual bool fused_fits(int n_heads, int n_kv_heads, int head_dim) const = 0;

    struct NormQkv {
        DeviceSpan x;      // [dim]: the residual
        DeviceSpan embed;  // [vocab, dim], or empty: x already holds the residual
        const int* token;  // the token id, on the host (embed only)
        DeviceSpan norm;   // [dim]
        FusedMatrix wq, wk, wv;
        DeviceSpan bq, bk, bv;              // or empty
        DeviceSpan inv_freq;                // [head_dim / 2]
        DeviceSpan q;                       // [dim]
        DeviceSpan cache_k, cache_v;        // [capacity, kv_dim]
        DeviceSpan q_keep, k_keep, v_keep;  // [dim], [kv_dim], [kv_dim], or empty
        int pos = 0;
        int dim = 0, kv_dim = 0, head_dim = 0;
        float eps = 0;
    };
    virtual void norm_qkv(const NormQkv& a) = 0;

    struct Attend {
        DeviceSpan out, q, cache_k, cache_v;  // out, q: [n_heads * head_dim]
        DeviceSpan probs;     // [n_heads, stride], or empty; stride = probs.size / n_heads
        DeviceSpan out_keep;  // [n_heads * head_dim], or empty
        int pos = 0;
        int n_heads = 0, n_kv_heads = 0, head_dim = 0;
    };
    virtual void attention(const Attend& a) = 0;

    // x += W in.   x: [d], in: [n], W: [d, n]
    virtual void matvec_add(DeviceSpan x, DeviceSpan in, const FusedMatrix& w, int n, int d) = 0;
    // h = silu(xb w1) * (xb w3), xb = rmsnorm(x) * norm.   x, norm: [dim], w1, w3: [hidden, dim]
    virtual void norm_gate_up(DeviceSpan h, DeviceSpan x, DeviceSpan norm, const FusedMatrix& w1,
                              const FusedMatrix& w3, int dim, int hidden, float eps) = 0;
    // logits = (rmsnorm(x) * norm) W.   W: [vocab, dim]
    virtual void norm_logits(DeviceSpan logits, DeviceSpan x, DeviceSpan norm, const FusedMatrix& w,
                             int dim, int vocab, float eps) = 0;
};

}  // namespace kvs
