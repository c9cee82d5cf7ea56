#pragma once
// K/V rows as a forward pass returns them and a step keeps them (ForwardResult::kv_rows,
// StepRecord::kv_rows, Runner::read_kv_rows): one float block [n_layers, 2 (K, V), rows, kv_dim],
// each layer's K rows and then its V rows, a row being the n_kv_heads x head_dim values one
// token wrote. Every reader and writer of that block indexes it through this view.
#include <cstddef>
#include <span>

namespace kvs {

template <class F>
struct KvRowView {
    static constexpr int K = 0, V = 1;  // the side of a row
    // null: the layout alone (offsets into a buffer elsewhere, such as a device's)
    F* data = nullptr;
    int n_layers = 0, rows = 0, kv_dim = 0;

    std::size_t size() const { return std::size_t(n_layers) * layer_floats(); }
    // One layer's K rows and V rows: from one layer's first K row to the next layer's.
    std::size_t layer_floats() const { return std::size_t(2) * rows * kv_dim; }
    // Where layer `layer`'s K (side 0) or V (side 1) row `row` starts, in floats.
    std::size_t offset(int layer, int side, int row = 0) const {
        return ((std::size_t(layer) * 2 + side) * rows + row) * kv_dim;
    }
    std::span<F> row(int layer, int side, int r) const {
        return {data + offset(layer, side, r), std::size_t(kv_dim)};
    }
    // Every row of one layer's K or V: [rows, kv_dim]
    std::span<F> rows_of(int layer, int side) const {
        return {data + offset(layer, side), std::size_t(rows) * kv_dim};
    }
};

using KvRows = KvRowView<float>;
using ConstKvRows = KvRowView<const float>;

}  // namespace kvs
