#pragma once
// Query rows and attention outputs as a forward pass returns them and a step keeps them
// (ForwardResult::q_rows and attn_out, StepRecord::q_rows and attn_out): one float block
// [n_layers, rows, n_heads * head_dim], each kept query row's q after RoPE (or its attention
// output before the output projection), its heads side by side. The K/V rows' view is beside it
// (core/model/kv_rows.h); every reader of these blocks indexes them through this view.
#include <cstddef>
#include <span>

namespace kvs {

template <class F>
struct QRowView {
    F* data = nullptr;
    int n_layers = 0, rows = 0, n_heads = 0, head_dim = 0;

    std::size_t dim() const { return std::size_t(n_heads) * head_dim; }
    std::size_t size() const { return std::size_t(n_layers) * rows * dim(); }
    // Where layer `layer`'s row `r`, head `h` starts, in floats.
    std::size_t offset(int layer, int r, int h = 0) const {
        return (std::size_t(layer) * rows + r) * dim() + std::size_t(h) * head_dim;
    }
    // Row r of one layer, every head: [n_heads * head_dim]
    std::span<F> row(int layer, int r) const { return {data + offset(layer, r), dim()}; }
    // One head of it: [head_dim]
    std::span<F> head(int layer, int r, int h) const {
        return {data + offset(layer, r, h), std::size_t(head_dim)};
    }
};

using QRows = QRowView<float>;
using ConstQRows = QRowView<const float>;

}  // namespace kvs
