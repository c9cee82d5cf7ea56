#pragma once
// A paged KV cache's storage, as vLLM's PagedAttention lays it out: a pool of fixed-size blocks,
// each block_size rows of every layer's K and V, a free list and a reference count per block. A
// sequence names its rows by a block table: position p is row p % block_size of block
// table[p / block_size]. Several sequences may hold one block (a shared prompt prefix); it goes
// back to the free list when the last holder lets it go.
// A quantised pool (int8 or fp8-e4m3, core/model/kv_quant.h) keeps each row as kv_dim bytes and
// one float scale instead of kv_dim floats; its rows are read and written only through
// load_rows / store_rows, which convert. It lives in host memory, so it runs on the CPU backend.
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "core/model/backend.h"
#include "core/model/kv_quant.h"

namespace kvs {

class KvBlockPool {
  public:
    // Throws kvs::Error for no blocks, or a quantised type on a backend other than the CPU's.
    KvBlockPool(Backend& backend, int n_layers, int n_blocks, int block_size, int kv_dim,
                KvCacheType type = KvCacheType::F32);
    KvCacheType type() const { return type_; }
    bool quantised() const { return type_ != KvCacheType::F32; }
    int n_blocks() const { return n_blocks_; }
    int block_size() const { return block_size_; }
    int free_blocks() const { return static_cast<int>(free_.size()); }
    int used_blocks() const { return n_blocks_ - free_blocks(); }
    // A free block with one reference, or -1 when every block is held.
    int take();
    void share(int block);  // one more holder
    void drop(int block);   // one holder less; back to the free list at none
    int refs(int block) const { return refs_.at(block); }
    // Layer l's float32 rows of every block: [n_blocks * block_size, kv_dim] (empty when
    // quantised: its rows go through load_rows / store_rows).
    DeviceSpan k(int layer) const {
        return quantised() ? DeviceSpan{} : keys_.at(layer * layer_floats_, layer_floats_);
    }
    DeviceSpan v(int layer) const {
        return quantised() ? DeviceSpan{} : values_.at(layer * layer_floats_, layer_floats_);
    }
    // Storage rows [row, row + n) of layer l into contiguous float rows `k`, `v` ([n, kv_dim]),
    // dequantised; store_rows quantises them back (copies when float32).
    void load_rows(int layer, std::size_t row, int n, DeviceSpan k, DeviceSpan v) const;
    void store_rows(int layer, std::size_t row, int n, DeviceSpan k, DeviceSpan v) const;
    // Rows [0, rows) of block `from` into block `to`, every layer's K and V (copy-on-write of a
    // shared, partly filled block before a holder writes its next row into it).
    void copy_block(int from, int to, int rows);
    // K and V of one position, every layer: 2 x layers x kv_dim x 4 bytes in float32; 2 x
    // layers x (kv_dim bytes + a 4-byte scale) quantised.
    std::size_t bytes_per_row() const {
        return std::size_t(2) * n_layers_ * kv_row_bytes(type_, kv_dim_);
    }
    // The whole pool: bytes_per_row x n_blocks x block_size.
    std::size_t bytes() const { return bytes_per_row() * n_blocks_ * block_size_; }

  private:
    Backend& be_;
    int n_layers_, n_blocks_, block_size_, kv_dim_;
    KvCacheType type_;
    std::size_t layer_floats_;    // n_blocks * block_size * kv_dim
    DeviceBuffer keys_, values_;  // float32: [n_layers, n_blocks * block_size, kv_dim]
    // Quantised: bytes [n_layers, n_blocks * block_size, kv_dim], scales [n_layers, n_blocks *
    // block_size]. mutable: a runner holds the pool const and writes rows through store_rows.
    mutable std::vector<std::uint8_t> qk_, qv_;
    mutable std::vector<float> sk_, sv_;
    mutable std::vector<float> host_;  // float rows on their way to or from the backend
    std::vector<int> free_;            // taken from the back: block 0 first
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
