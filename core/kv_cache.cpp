#include "core/kv_cache.h"

namespace kvs {

KvCache::KvCache(Backend& backend, int n_layers, int capacity, int n_kv_heads, int head_dim) {
    shape_ = {n_layers, capacity, 0, n_kv_heads, head_dim, 4};
    const std::size_t n = static_cast<std::size_t>(capacity) * n_kv_heads * head_dim;
    for (int l = 0; l < n_layers; ++l) {
        k_.emplace_back(backend, n);
        v_.emplace_back(backend, n);
    }
}

}  // namespace kvs
