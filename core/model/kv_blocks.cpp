#include "core/model/kv_blocks.h"

#include <string>

#include "core/util/error.h"

namespace kvs {

KvBlockPool::KvBlockPool(Backend& backend, int n_layers, int n_blocks, int block_size, int kv_dim)
    : be_(backend),
      n_layers_(n_layers),
      n_blocks_(n_blocks),
      block_size_(block_size),
      kv_dim_(kv_dim),
      layer_floats_(std::size_t(n_blocks) * block_size * kv_dim) {
    if (n_blocks < 1 || block_size < 1)
        throw Error("a KV block pool of " + std::to_string(n_blocks) + " blocks of " +
                    std::to_string(block_size) + " rows");
    k_ = DeviceBuffer(backend, layer_floats_ * n_layers);
    v_ = DeviceBuffer(backend, layer_floats_ * n_layers);
    refs_.assign(n_blocks, 0);
    for (int b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

int KvBlockPool::take() {
    if (free_.empty()) return -1;
    const int b = free_.back();
    free_.pop_back();
    refs_[b] = 1;
    return b;
}

void KvBlockPool::share(int block) {
    if (refs_.at(block) < 1) throw Error("sharing a free KV block");
    ++refs_[block];
}

void KvBlockPool::drop(int block) {
    if (refs_.at(block) < 1) throw Error("letting go of a free KV block");
    if (--refs_[block] == 0) free_.push_back(block);
}

void KvBlockPool::copy_block(int from, int to, int rows) {
    const std::size_t n = std::size_t(rows) * kv_dim_, block = std::size_t(block_size_) * kv_dim_;
    if (n == 0) return;
    // One strided copy per K and V: a row of the copy is one layer's part of the block.
    be_.copy_rows(k_.at(to * block, 0), layer_floats_, k_.at(from * block, 0), layer_floats_,
                  n_layers_, n);
    be_.copy_rows(v_.at(to * block, 0), layer_floats_, v_.at(from * block, 0), layer_floats_,
                  n_layers_, n);
}

}  // namespace kvs
