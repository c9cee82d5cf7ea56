#include "core/model/kv_blocks.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/util/error.h"

namespace kvs {

KvBlockPool::KvBlockPool(Backend& backend, int n_layers, int n_blocks, int block_size, int kv_dim,
                         KvCacheType type)
    : be_(backend),
      n_layers_(n_layers),
      n_blocks_(n_blocks),
      block_size_(block_size),
      kv_dim_(kv_dim),
      type_(type),
      layer_floats_(std::size_t(n_blocks) * block_size * kv_dim) {
    if (n_blocks < 1 || block_size < 1)
        throw Error("a KV block pool of " + std::to_string(n_blocks) + " blocks of " +
                    std::to_string(block_size) + " rows");
    if (quantised()) {
        // The compact rows live in host memory on every backend: load_rows and store_rows convert
        // them there and move the float rows with the backend's upload and download.
        qk_.assign(layer_floats_ * n_layers, 0);
        qv_.assign(layer_floats_ * n_layers, 0);
        sk_.assign(std::size_t(n_blocks) * block_size * n_layers, 0.0f);
        sv_.assign(std::size_t(n_blocks) * block_size * n_layers, 0.0f);
    } else {
        keys_ = DeviceBuffer(backend, layer_floats_ * n_layers);
        values_ = DeviceBuffer(backend, layer_floats_ * n_layers);
    }
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

namespace {
// Every e4m3 byte's value, from fp8_e4m3_decode: a row is dequantised by lookups on the host.
const std::array<float, 256>& fp8_values() {
    static const std::array<float, 256> table = [] {
        std::array<float, 256> t{};
        for (int c = 0; c < 256; ++c) t[c] = fp8_e4m3_decode(static_cast<std::uint8_t>(c));
        return t;
    }();
    return table;
}

void dequantize(KvCacheType type, const std::uint8_t* q, float scale, int n, float* x) {
    if (type != KvCacheType::Fp8) return dequantize_row(type, q, scale, n, x);
    const std::array<float, 256>& value = fp8_values();
    for (int i = 0; i < n; ++i) x[i] = value[q[i]] * scale;
}
}  // namespace

void KvBlockPool::load_rows(int layer, std::size_t row, int n, DeviceSpan k, DeviceSpan v) const {
    const std::size_t len = std::size_t(n) * kv_dim_;
    if (!quantised()) {
        be_.copy_rows(k, len, this->k(layer).at(row * kv_dim_, len), len, 1, len);
        be_.copy_rows(v, len, this->v(layer).at(row * kv_dim_, len), len, 1, len);
        return;
    }
    // host_: [2 (K, V), n, kv_dim], dequantised here, then one upload per side.
    host_.resize(2 * len);
    float *hk = host_.data(), *hv = hk + len;
    const std::size_t r0 = layer * std::size_t(n_blocks_) * block_size_ + row;
    for (int i = 0; i < n; ++i) {
        const std::size_t r = r0 + i;
        dequantize(type_, &qk_[r * kv_dim_], sk_[r], kv_dim_, hk + std::size_t(i) * kv_dim_);
        dequantize(type_, &qv_[r * kv_dim_], sv_[r], kv_dim_, hv + std::size_t(i) * kv_dim_);
    }
    be_.upload(k, hk, len);
    be_.upload(v, hv, len);
}

void KvBlockPool::store_rows(int layer, std::size_t row, int n, DeviceSpan k, DeviceSpan v) const {
    const std::size_t len = std::size_t(n) * kv_dim_;
    if (!quantised()) {
        be_.copy_rows(this->k(layer).at(row * kv_dim_, len), len, k, len, 1, len);
        be_.copy_rows(this->v(layer).at(row * kv_dim_, len), len, v, len, 1, len);
        return;
    }
    // host_: [2 (K, V), n, kv_dim], downloaded, then quantised here.
    host_.resize(2 * len);
    float *hk = host_.data(), *hv = hk + len;
    be_.download(hk, k, len);
    be_.download(hv, v, len);
    const std::size_t r0 = layer * std::size_t(n_blocks_) * block_size_ + row;
    for (int i = 0; i < n; ++i) {
        const std::size_t r = r0 + i;
        sk_[r] = quantize_row(type_, hk + std::size_t(i) * kv_dim_, kv_dim_, &qk_[r * kv_dim_]);
        sv_[r] = quantize_row(type_, hv + std::size_t(i) * kv_dim_, kv_dim_, &qv_[r * kv_dim_]);
    }
}

void KvBlockPool::copy_block(int from, int to, int rows) {
    const std::size_t n = std::size_t(rows) * kv_dim_, block = std::size_t(block_size_) * kv_dim_;
    if (n == 0) return;
    if (quantised()) {
        // Each layer's bytes and scales of the block's first `rows` rows.
        const std::size_t layer_rows = std::size_t(n_blocks_) * block_size_;
        for (int l = 0; l < n_layers_; ++l) {
            const std::size_t src = l * layer_rows + std::size_t(from) * block_size_,
                              dst = l * layer_rows + std::size_t(to) * block_size_;
            std::copy_n(&qk_[src * kv_dim_], n, &qk_[dst * kv_dim_]);
            std::copy_n(&qv_[src * kv_dim_], n, &qv_[dst * kv_dim_]);
            std::copy_n(&sk_[src], rows, &sk_[dst]);
            std::copy_n(&sv_[src], rows, &sv_[dst]);
        }
        return;
    }
    // One strided copy per K and V: a row of the copy is one layer's part of the block.
    be_.copy_rows(keys_.at(to * block, 0), layer_floats_, keys_.at(from * block, 0), layer_floats_,
                  n_layers_, n);
    be_.copy_rows(values_.at(to * block, 0), layer_floats_, values_.at(from * block, 0),
                  layer_floats_, n_layers_, n);
}

}  // namespace kvs
