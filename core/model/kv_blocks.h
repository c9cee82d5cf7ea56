#pragma once
// A paged KV cache's storage, as vLLM's PagedAttention lays it out: a pool of fixed-size blocks,
// each block_size rows of every layer's K and V. A sequence names its rows by a block table:
// position p is row p % block_size of block table[p / block_size]. Which blocks are held, by whom,
// and which keep a cached prefix is the server's business (core/serving/block_cache.h); the
// runner only reads and writes rows through tables.
// A quantised pool (int8 or fp8-e4m3, core/model/kv_quant.h) keeps each row as kv_dim bytes with
// its scales (KvScaleMode) instead of kv_dim floats; its rows are read and written only through
// load_rows / store_rows, which convert. It lives in host memory, so it runs on the CPU backend.
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "core/model/backend.h"
#include "core/model/kv_quant.h"

namespace kvs {

// The fixed scales of a quantised pool (KvScaleMode::Tensor: k and v [n_layers]; ChannelK: k
// [n_layers, kv_dim], v unused: V keeps a scale per row).
struct KvScales {
    std::vector<float> k, v;
};

class KvBlockPool {
  public:
    // Throws kvs::Error for no blocks.
    KvBlockPool(Backend& backend, int n_layers, int n_blocks, int block_size, int kv_dim,
                KvCacheType type = KvCacheType::F32, KvScaleMode mode = KvScaleMode::Token);
    KvCacheType type() const { return type_; }
    KvScaleMode scale_mode() const { return mode_; }
    bool quantised() const { return type_ != KvCacheType::F32; }
    int n_blocks() const { return n_blocks_; }
    int block_size() const { return block_size_; }
    // A quantised pool's fixed scales (Tensor, ChannelK), before any row is stored. Throws for
    // scales of the wrong shape, or for a pool whose scales are per row.
    void set_scales(const KvScales& scales);
    // Layer l's float32 rows of every block: [n_blocks * block_size, kv_dim] (empty when
    // quantised: its rows go through load_rows / store_rows).
    DeviceSpan k(int layer) const {
        return quantised() ? DeviceSpan{} : k_.at(layer * layer_floats_, layer_floats_);
    }
    DeviceSpan v(int layer) const {
        return quantised() ? DeviceSpan{} : v_.at(layer * layer_floats_, layer_floats_);
    }
    // Storage rows [row, row + n) of layer l into contiguous float rows `k`, `v` ([n, kv_dim]),
    // dequantised; store_rows quantises them back (copies when float32).
    void load_rows(int layer, std::size_t row, int n, DeviceSpan k, DeviceSpan v) const;
    void store_rows(int layer, std::size_t row, int n, DeviceSpan k, DeviceSpan v) const;
    // K and V of one position, every layer: 2 x layers x kv_dim x 4 bytes in float32; quantised,
    // kv_dim bytes a row and its scales: 4 bytes a row for a per-row scale (both, or V's only
    // with per-channel K scales); the fixed scales are counted apart (scale_bytes).
    std::size_t bytes_per_row() const;
    // The fixed scales: 2 x layers x 4 bytes per tensor, layers x kv_dim x 4 per channel.
    std::size_t scale_bytes() const;
    // The whole pool: bytes_per_row x n_blocks x block_size, and the fixed scales.
    std::size_t bytes() const { return bytes_per_row() * n_blocks_ * block_size_ + scale_bytes(); }

  private:
    Backend& be_;
    int n_layers_, n_blocks_, block_size_, kv_dim_;
    KvCacheType type_;
    KvScaleMode mode_;
    std::size_t layer_floats_;  // n_blocks * block_size * kv_dim
    DeviceBuffer k_, v_;        // float32: [n_layers, n_blocks * block_size, kv_dim]
    // Quantised: bytes [n_layers, n_blocks * block_size, kv_dim]; per-row scales [n_layers,
    // n_blocks * block_size] (K's unused unless Token, V's unless Tensor); the fixed ones and
    // their inverses (KvScales' shapes). mutable: a runner holds the pool const and writes rows
    // through store_rows.
    mutable std::vector<std::uint8_t> qk_, qv_;
    mutable std::vector<float> sk_, sv_;
    KvScales fixed_, inverse_;
    mutable std::vector<float> host_;  // float rows on their way to or from the backend
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
