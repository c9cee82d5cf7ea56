#pragma once
// The KV cache of one sequence: per layer, K and V of shape [capacity, n_kv_heads, head_dim],
// living on the backend. Appending writes one row per token; nothing is ever replaced.
// All layers' K share one allocation [n_layers, capacity, kv_dim] (V likewise), so the rows of
// every layer can be gathered with one strided copy.
#include <cstddef>
#include <vector>

#include "core/model/backend.h"

namespace kvs {

struct KvShape {
    int n_layers = 0;
    int capacity = 0;  // rows allocated (the context length)
    int len = 0;       // rows written
    int n_kv_heads = 0;
    int head_dim = 0;
    int bytes_per_value = 4;
    // 2 (K and V) x layers x tokens x kv heads x head size x 4 bytes
    std::size_t bytes_per_token() const {
        return std::size_t(2) * n_layers * n_kv_heads * head_dim * bytes_per_value;
    }
    std::size_t bytes() const { return bytes_per_token() * len; }
};

class KvCache {
  public:
    KvCache(Backend& backend, int n_layers, int capacity, int n_kv_heads, int head_dim);
    DeviceSpan k(int layer) const { return k_.at(layer * layer_floats_, layer_floats_); }
    DeviceSpan v(int layer) const { return v_.at(layer * layer_floats_, layer_floats_); }
    // Every layer: [n_layers, capacity, kv_dim]
    DeviceSpan k_all() const { return k_.span(); }
    DeviceSpan v_all() const { return v_.span(); }
    int len() const { return shape_.len; }
    void set_len(int len) { shape_.len = len; }
    const KvShape& shape() const { return shape_; }

  private:
    KvShape shape_;
    std::size_t layer_floats_ = 0;  // capacity * kv_dim
    DeviceBuffer k_, v_;
};

}  // namespace kvs
