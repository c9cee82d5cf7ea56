#include "core/model/kv_blocks.h"

#include <array>
#include <string>

#include "core/util/error.h"

namespace kvs {

KvBlockPool::KvBlockPool(Backend& backend, int n_layers, int n_blocks, int block_size, int kv_dim,
                         KvCacheType type, KvScaleMode mode)
    : be_(backend),
      n_layers_(n_layers),
      n_blocks_(n_blocks),
      block_size_(block_size),
      kv_dim_(kv_dim),
      type_(type),
      mode_(type == KvCacheType::F32 ? KvScaleMode::Token : mode),
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
        k_ = DeviceBuffer(backend, layer_floats_ * n_layers);
        v_ = DeviceBuffer(backend, layer_floats_ * n_layers);
        // Written now (zeros), so that the memory is the process's before the first pass: a
        // host backend's allocation is only mapped at its first write, which would be paid by
        // whichever pass first reaches each block.
        const std::vector<float> zeros(layer_floats_, 0.0f);
        for (int l = 0; l < n_layers; ++l)
            for (const DeviceBuffer* b : {&k_, &v_})
                be_.upload(b->at(l * layer_floats_, layer_floats_), zeros.data(), layer_floats_);
    }
}

std::size_t KvBlockPool::bytes_per_row() const {
    if (!quantised()) return std::size_t(2) * n_layers_ * 4 * kv_dim_;
    const std::size_t row_scales = mode_ == KvScaleMode::Token    ? 2
                                   : mode_ == KvScaleMode::Tensor ? 0
                                                                  : 1;
    return std::size_t(n_layers_) * (2 * std::size_t(kv_dim_) + 4 * row_scales);
}

std::size_t KvBlockPool::scale_bytes() const {
    if (!quantised()) return 0;
    if (mode_ == KvScaleMode::Tensor) return std::size_t(2) * n_layers_ * 4;
    if (mode_ == KvScaleMode::ChannelK) return std::size_t(n_layers_) * kv_dim_ * 4;
    return 0;
}

void KvBlockPool::set_scales(const KvScales& s) {
    const std::size_t L = n_layers_;
    const bool fits = (mode_ == KvScaleMode::Tensor && s.k.size() == L && s.v.size() == L) ||
                      (mode_ == KvScaleMode::ChannelK && s.k.size() == L * kv_dim_);
    if (!quantised() || !fits)
        throw Error(std::string("scales of the wrong shape for a ") + kv_cache_type_name(type_) +
                    " pool with " + kv_scale_mode_name(mode_) + " scales");
    fixed_ = s;
    inverse_ = s;
    for (auto* list : {&inverse_.k, &inverse_.v})
        for (float& x : *list) x = x > 0 ? 1.0f / x : 0.0f;
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

// dequantize_fixed, fp8 by the table.
void dequantize(KvCacheType type, const std::uint8_t* q, const float* scale, int stride, int n,
                float* x) {
    if (type != KvCacheType::Fp8) return dequantize_fixed(type, q, scale, stride, n, x);
    const std::array<float, 256>& value = fp8_values();
    for (int i = 0; i < n; ++i) x[i] = value[q[i]] * scale[i * stride];
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
        float *xk = hk + std::size_t(i) * kv_dim_, *xv = hv + std::size_t(i) * kv_dim_;
        const std::uint8_t *ck = &qk_[r * kv_dim_], *cv = &qv_[r * kv_dim_];
        switch (mode_) {
            case KvScaleMode::Token:
                dequantize(type_, ck, &sk_[r], 0, kv_dim_, xk);
                dequantize(type_, cv, &sv_[r], 0, kv_dim_, xv);
                break;
            case KvScaleMode::Tensor:
                dequantize(type_, ck, &fixed_.k[layer], 0, kv_dim_, xk);
                dequantize(type_, cv, &fixed_.v[layer], 0, kv_dim_, xv);
                break;
            case KvScaleMode::ChannelK:
                dequantize(type_, ck, &fixed_.k[std::size_t(layer) * kv_dim_], 1, kv_dim_, xk);
                dequantize(type_, cv, &sv_[r], 0, kv_dim_, xv);
                break;
        }
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
    if (mode_ != KvScaleMode::Token && fixed_.k.empty())
        throw Error("a quantised pool with fixed scales stores rows before its scales are set");
    // host_: [2 (K, V), n, kv_dim], downloaded, then quantised here.
    host_.resize(2 * len);
    float *hk = host_.data(), *hv = hk + len;
    be_.download(hk, k, len);
    be_.download(hv, v, len);
    const std::size_t r0 = layer * std::size_t(n_blocks_) * block_size_ + row;
    for (int i = 0; i < n; ++i) {
        const std::size_t r = r0 + i;
        const float *xk = hk + std::size_t(i) * kv_dim_, *xv = hv + std::size_t(i) * kv_dim_;
        std::uint8_t *ck = &qk_[r * kv_dim_], *cv = &qv_[r * kv_dim_];
        switch (mode_) {
            case KvScaleMode::Token:
                sk_[r] = quantize_row(type_, xk, kv_dim_, ck);
                sv_[r] = quantize_row(type_, xv, kv_dim_, cv);
                break;
            case KvScaleMode::Tensor:
                quantize_fixed(type_, xk, kv_dim_, &inverse_.k[layer], 0, ck);
                quantize_fixed(type_, xv, kv_dim_, &inverse_.v[layer], 0, cv);
                break;
            case KvScaleMode::ChannelK:
                quantize_fixed(type_, xk, kv_dim_, &inverse_.k[std::size_t(layer) * kv_dim_], 1,
                               ck);
                sv_[r] = quantize_row(type_, xv, kv_dim_, cv);
                break;
        }
    }
}

}  // namespace kvs
