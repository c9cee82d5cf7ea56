#pragma once
// A paged KV cache's storage, as vLLM's PagedAttention lays it out: a pool of fixed-size blocks,
// each block_size rows of every layer's K and V, a free list and a reference count per block. A
// sequence names its rows by a block table: position p is row p % block_size of block
// table[p / block_size]. Several sequences may hold one block (a shared prompt prefix); it goes
// back to the free list when the last holder lets it go.
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "core/model/backend.h"

namespace kvs {

class KvBlockPool {
  public:
    KvBlockPool(Backend& backend, int n_layers, int n_blocks, int block_size, int kv_dim);
    int n_blocks() const { return n_blocks_; }
    int block_size() const { return block_size_; }
    int free_blocks() const { return static_cast<int>(free_.size()); }
    int used_blocks() const { return n_blocks_ - free_blocks(); }
    // A free block with one reference, or -1 when every block is held.
    int take();
    void share(int block);  // one more holder
    void drop(int block);   // one holder less; back to the free list at none
    int refs(int block) const { return refs_.at(block); }
    // Layer l's rows of every block: [n_blocks * block_size, kv_dim]
    DeviceSpan k(int layer) const { return k_.at(layer * layer_floats_, layer_floats_); }
    DeviceSpan v(int layer) const { return v_.at(layer * layer_floats_, layer_floats_); }
    // Rows [0, rows) of block `from` into block `to`, every layer's K and V (copy-on-write of a
    // shared, partly filled block before a holder writes its next row into it).
    void copy_block(int from, int to, int rows);
    // 2 (K, V) x layers x rows x kv_dim x 4 bytes, for the whole pool.
    std::size_t bytes() const { return 2 * layer_floats_ * n_layers_ * sizeof(float); }

  private:
    Backend& be_;
    int n_layers_, n_blocks_, block_size_, kv_dim_;
    std::size_t layer_floats_;  // n_blocks * block_size * kv_dim
    DeviceBuffer k_, v_;        // [n_layers, n_blocks * block_size, kv_dim]
    std::vector<int> free_;     // taken from the back: block 0 first
    std::vector<int> refs_;
};

// Positions [first, first + n) of a block table in runs that stay inside one block: for each,
// fn(position, storage row of that position within a layer, rows in the run).
template <class Fn>
void for_each_block_run(std::span<const int> table, int block_size, int first, int n, Fn&& fn) {
    for (int p = first; p < first + n;) {
        const int in_block = p % block_size;
        const int run = std::min(block_size - in_block, first + n - p);
        fn(p, table[p / block_size] * block_size + in_block, run);
        p += run;
    }
}

}  // namespace kvs
