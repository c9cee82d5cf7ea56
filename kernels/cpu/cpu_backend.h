#pragma once
// The reference backend: plain loops on the host, in the same arithmetic order as llama2.c's
// run.c, so its numbers are the ones every other backend is checked against.
#include <vector>

#include "core/backend.h"

namespace kvs {

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(bool time_ops = true) : time_ops_(time_ops) {}
    std::string name() const override { return "cpu"; }
    std::string device() const override;

    DeviceSpan alloc(std::size_t n) override;
    void release(DeviceSpan s) override;
    void upload(DeviceSpan dst, const float* src, std::size_t n) override;
    void download(float* dst, DeviceSpan src, std::size_t n) override;

    void embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) override;
    void rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim) override;
    void matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) override;
    void rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim,
              int head_dim) override;
    void kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v, int pos0,
                   int T, int kv_dim) override;
    void attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                   DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                   int head_dim) override;
    void swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) override;
    void add(DeviceSpan x, DeviceSpan y, std::size_t n) override;

private:
    bool time_ops_;
    std::vector<float> scores_;  // one attention row
};

}  // namespace kvs
