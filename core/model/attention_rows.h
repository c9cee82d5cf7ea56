#pragma once
// Attention weights computed in one step, for every layer and head. Rows are causal, so row r
// (the query at position q_pos0 + r) has q_pos0 + r + 1 keys; rows are stored packed, without
// the masked cells, which halves a prefill's memory. Without the causal mask (all_keys) every
// row has every key, q_pos0 + rows.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kvs {

struct AttentionRows {
    int n_layers = 0;
    int n_heads = 0;
    int rows = 0;           // query rows kept
    int q_pos0 = 0;         // position of the first kept row
    bool all_keys = false;  // bidirectional: each row over every key
    std::vector<float> p;
    // 1 where a row had no key it may attend to (the toy's "even positions" head at position 1):
    // its weights are all 0 and its output is "none". Empty vector when no row is empty.
    std::vector<std::uint8_t> empty_row;  // [n_layers, n_heads, rows]
    // Pre-softmax scores, packed like p, for models whose scores are worth showing (the toy:
    // 0 where a head's rule selects the key, -inf where it does not). Empty otherwise.
    std::vector<float> scores;

    // Keys of row r.
    std::size_t keys(int r) const {
        return all_keys ? std::size_t(q_pos0) + rows : std::size_t(q_pos0) + r + 1;
    }
    // Floats per (layer, head): sum over rows of keys(r).
    std::size_t per_head() const {
        const std::size_t R = rows, P = q_pos0;
        return all_keys ? R * (P + R) : R * P + R * (R + 1) / 2;
    }
    std::size_t row_offset(int layer, int head, int r) const {
        const std::size_t R = r, P = q_pos0;
        return (static_cast<std::size_t>(layer) * n_heads + head) * per_head() +
               (all_keys ? R * (P + rows) : R * P + R * (R + 1) / 2);
    }
    void resize(int layers, int heads, int n_rows, int pos0, bool every_key = false) {
        n_layers = layers;
        n_heads = heads;
        rows = n_rows;
        q_pos0 = pos0;
        all_keys = every_key;
        p.assign(static_cast<std::size_t>(layers) * heads * per_head(), 0.0f);
        empty_row.clear();
        scores.clear();
    }
    std::span<float> row(int layer, int head, int r) {
        return {p.data() + row_offset(layer, head, r), keys(r)};
    }
    std::span<const float> row(int layer, int head, int r) const {
        return {p.data() + row_offset(layer, head, r), keys(r)};
    }
    // Empty when no scores were kept.
    std::span<const float> score_row(int layer, int head, int r) const {
        if (scores.empty()) return {};
        return {scores.data() + row_offset(layer, head, r), keys(r)};
    }
    bool is_empty_row(int layer, int head, int r) const {
        return !empty_row.empty() &&
               empty_row[(static_cast<std::size_t>(layer) * n_heads + head) * rows + r];
    }
    std::size_t bytes() const {
        return (p.capacity() + scores.capacity()) * sizeof(float) + empty_row.capacity();
    }
};

}  // namespace kvs
