#pragma once
// A CPU backend that keeps what each compact (quantised) matmul of a pass read: the last token's
// row, in call order (for a Llama layer q, k, v, wo, w1, w3, w2; then the classifier). The peer
// test quantises those rows to Q8_K as the integer paths do and compares the codes with the ones
// ggml gets from its own activations. Every op is the CPU backend's own.
#include <string>
#include <vector>

#include "core/model/backend.h"
#include "kernels/cpu/cpu_backend.h"

namespace kvs::test {

class RecordingBackend final : public Backend {
  public:
    explicit RecordingBackend(CpuBackend& cpu) : b_(cpu) {}
    // [calls][n]: the last token's input row of each compact matmul since clear()
    std::vector<std::vector<float>> inputs;
    void clear() { inputs.clear(); }

    std::string name() const override { return b_.name(); }
    std::string device() const override { return b_.device(); }
    DeviceSpan alloc(std::size_t n) override { return b_.alloc(n); }
    void release(DeviceSpan s) noexcept override { b_.release(s); }
    void upload(DeviceSpan dst, const float* src, std::size_t n) override {
        b_.upload(dst, src, n);
    }
    void download(float* dst, DeviceSpan src, std::size_t n) override { b_.download(dst, src, n); }
    DeviceSpan adopt_host(const float* src, std::size_t n) override {
        return b_.adopt_host(src, n);
    }
    void release_adopted(DeviceSpan s) noexcept override { b_.release_adopted(s); }
    void embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) override {
        b_.embed(x, table, tokens, T, dim);
    }
    void rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim, float eps) override {
        b_.rmsnorm(out, x, w, T, dim, eps);
    }
    void layernorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, DeviceSpan b, int T, int dim,
                   float eps) override {
        b_.layernorm(out, x, w, b, T, dim, eps);
    }
    void matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) override {
        b_.matmul(out, x, w, T, n, d);
    }
    bool runs_compact(GgmlType type) const override { return b_.runs_compact(type); }
    void matmul_compact(DeviceSpan out, DeviceSpan x, GgmlType type, const unsigned char* w, int T,
                        int n, int d) override {
        inputs.emplace_back(x.data + std::size_t(T - 1) * n, x.data + std::size_t(T) * n);
        b_.matmul_compact(out, x, type, w, T, n, d);
    }
    void embed_compact(DeviceSpan x, GgmlType type, const unsigned char* table, const int* tokens,
                       int T, int dim) override {
        b_.embed_compact(x, type, table, tokens, T, dim);
    }
    const unsigned char* adopt_compact(const unsigned char* host, std::size_t bytes) override {
        return b_.adopt_compact(host, bytes);
    }
    void release_compact(const unsigned char* adopted) noexcept override {
        b_.release_compact(adopted);
    }
    void rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim, int head_dim,
              DeviceSpan inv_freq) override {
        b_.rope(q, k, T, pos0, dim, kv_dim, head_dim, inv_freq);
    }
    void kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v, int pos0,
                   int T, int kv_dim) override {
        b_.kv_append(cache_k, cache_v, k, v, pos0, T, kv_dim);
    }
    void attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                   DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads, int head_dim,
                   bool causal) override {
        b_.attention(out, q, cache_k, cache_v, probs, T, pos0, n_heads, n_kv_heads, head_dim,
                     causal);
    }
    void swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) override { b_.swiglu(h1, h3, n); }
    void gelu(DeviceSpan h, std::size_t n) override { b_.gelu(h, n); }
    void add(DeviceSpan x, DeviceSpan y, std::size_t n) override { b_.add(x, y, n); }
    void add_bias(DeviceSpan x, DeviceSpan b, int T, int n) override { b_.add_bias(x, b, T, n); }
    void copy_rows(DeviceSpan dst, std::size_t dst_stride, DeviceSpan src, std::size_t src_stride,
                   std::size_t rows, std::size_t row_len) override {
        b_.copy_rows(dst, dst_stride, src, src_stride, rows, row_len);
    }
    float* alloc_host(std::size_t n) override { return b_.alloc_host(n); }
    void release_host(float* p) noexcept override { b_.release_host(p); }
    void synchronize() override { b_.synchronize(); }
    void reset_op_times() override { b_.reset_op_times(); }
    OpTimes op_times() override { return b_.op_times(); }
    std::vector<OpCall> op_calls() override { return b_.op_calls(); }

  private:
    CpuBackend& b_;
};

}  // namespace kvs::test
