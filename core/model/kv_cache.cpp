#include "core/model/kv_cache.h"

namespace kvs {

KvCache::KvCache(Backend& backend, int n_layers, int capacity, int n_kv_heads, int head_dim) {
    shape_ = {n_layers, capacity, 0, n_kv_heads, head_dim, 4};
    layer_floats_ = static_cast<std::size_t>(capacity) * n_kv_heads * head_dim;
    k_ = DeviceBuffer(backend, layer_floats_ * n_layers);
    v_ = DeviceBuffer(backend, layer_floats_ * n_layers);
}

}  // namespace kvs
