#pragma once
// Where a kept query row's q, k and v came from, as a forward pass captures it
// (Capture::projections; ForwardResult::projections, StepRecord::projections): one float block
// [n_layers, rows, width], width = 3 dim + 3 kv_dim, each row of a layer holding
//   x       [dim]     the layer's input: the residual stream as the layer received it
//   x_norm  [dim]     the attention norm's output (RMSNorm; GPT-2: LayerNorm)
//   q       [dim]     x_norm · W_qᵀ (+ b_q), before RoPE (after it: the q rows,
//   core/model/q_rows.h) k       [kv_dim]  x_norm · W_kᵀ (+ b_k), before RoPE v       [kv_dim]
//   x_norm · W_vᵀ (+ b_v): the V row written to the cache (V is not rotated) k_rope  [kv_dim]  k
//   after RoPE: the K row written to the cache (GPT-2: k, no RoPE)
// Heads side by side in q (n_heads x head_dim) and in k, v, k_rope (n_kv_heads x head_dim). Every
// reader of the block indexes it through this view.
#include <cstddef>
#include <span>

namespace kvs {

template <class F>
struct ProjectionRowView {
    enum Part { X, XNorm, Q, K, V, KRope, kParts };
    F* data = nullptr;
    int n_layers = 0, rows = 0, dim = 0, kv_dim = 0;

    static std::size_t width(int dim, int kv_dim) { return 3 * std::size_t(dim) + 3 * kv_dim; }
    std::size_t width() const { return width(dim, kv_dim); }
    std::size_t size() const { return std::size_t(n_layers) * rows * width(); }
    std::size_t part_size(Part p) const { return p <= Q ? std::size_t(dim) : std::size_t(kv_dim); }
    // Where part p starts inside a row.
    std::size_t part_at(Part p) const {
        return p <= Q ? std::size_t(p) * dim : 3 * std::size_t(dim) + std::size_t(p - K) * kv_dim;
    }
    // Where layer `layer`'s row `r`, part p starts, in floats.
    std::size_t offset(int layer, int r, Part p) const {
        return (std::size_t(layer) * rows + r) * width() + part_at(p);
    }
    std::span<F> part(int layer, int r, Part p) const {
        return {data + offset(layer, r, p), part_size(p)};
    }
};

using ProjectionRows = ProjectionRowView<float>;
using ConstProjectionRows = ProjectionRowView<const float>;

}  // namespace kvs
