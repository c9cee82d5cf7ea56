#pragma once
// The KV cache of one sequence: per layer, K and V of shape [capacity, n_kv_heads, head_dim],
// living on the backend. Appending writes one row per token; nothing is ever replaced.
// All layers' K share one allocation [n_layers, capacity, kv_dim] (V likewise), so the rows of
// every layer can be gathered with one strided copy. A paged cache holds no rows of its own: they
// live in a KvBlockPool's blocks (core/model/kv_blocks.h), named by its block table.
#include <cstddef>
#include <span>
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

class KvBlockPool;

class KvCache {
  public:
    KvCache(Backend& backend, int n_layers, int capacity, int n_kv_heads, int head_dim);
    // Paged: rows in `pool`'s blocks; k(l) and v(l) are then the pool's layer spans
    // [n_blocks * block_size, kv_dim], and position p is row table()[p / bs] * bs + p % bs.
    KvCache(const KvBlockPool& pool, int n_layers, int capacity, int n_kv_heads, int head_dim);
    bool paged() const { return pool_ != nullptr; }
    const KvBlockPool* pool() const { return pool_; }
    std::span<const int> table() const { return table_; }
    // The block table and the rows written, set before each pass by whoever owns the blocks.
    void set_blocks(std::span<const int> table, int len);
    DeviceSpan k(int layer) const;
    DeviceSpan v(int layer) const;
    // Every layer: [n_layers, capacity, kv_dim]
    DeviceSpan k_all() const { return keys_.span(); }
    DeviceSpan v_all() const { return values_.span(); }
    int len() const { return shape_.len; }
    void set_len(int len) { shape_.len = len; }
    const KvShape& shape() const { return shape_; }

  private:
    KvShape shape_;
    std::size_t layer_floats_ = 0;  // capacity * kv_dim
    DeviceBuffer keys_, values_;
    const KvBlockPool* pool_ = nullptr;
    std::vector<int> table_;
};

}  // namespace kvs
