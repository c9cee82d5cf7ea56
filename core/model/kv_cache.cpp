#include "core/model/kv_cache.h"

#include "core/model/kv_blocks.h"
#include "core/util/error.h"

namespace kvs {

KvCache::KvCache(Backend& backend, int n_layers, int capacity, int n_kv_heads, int head_dim) {
    shape_ = {n_layers, capacity, 0, n_kv_heads, head_dim, 4};
    layer_floats_ = static_cast<std::size_t>(capacity) * n_kv_heads * head_dim;
    k_ = DeviceBuffer(backend, layer_floats_ * n_layers);
    v_ = DeviceBuffer(backend, layer_floats_ * n_layers);
}

KvCache::KvCache(const KvBlockPool& pool, int n_layers, int capacity, int n_kv_heads, int head_dim)
    : pool_(&pool) {
    shape_ = {n_layers, capacity, 0, n_kv_heads, head_dim, 4};
}

DeviceSpan KvCache::k(int layer) const {
    return pool_ ? pool_->k(layer) : k_.at(layer * layer_floats_, layer_floats_);
}

DeviceSpan KvCache::v(int layer) const {
    return pool_ ? pool_->v(layer) : v_.at(layer * layer_floats_, layer_floats_);
}

void KvCache::set_blocks(std::span<const int> table, int len) {
    if (!pool_) throw Error("a contiguous KV cache has no block table");
    // (Its rows may run past the capacity, the context, under a window: the runner checks.)
    if (len < 0 || std::size_t(len) > table.size() * pool_->block_size())
        throw Error("a block table of " + std::to_string(table.size()) + " blocks holds no " +
                    std::to_string(len) + " rows");
    // -1: a block let go under a window (core/serving), never read again.
    for (int b : table)
        if (b < -1 || b >= pool_->n_blocks()) throw Error("no KV block " + std::to_string(b));
    table_.assign(table.begin(), table.end());
    shape_.len = len;
}

}  // namespace kvs
