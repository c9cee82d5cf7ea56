#pragma once
// "cuda-emulated": every op runs the CUDA backend's kernels through the CPU emulator
// (emu_kernels.h), with the launch shapes the GPU would get. Memory is host memory. It exists so
// that a machine without a GPU, and a build without nvcc, still runs and tests the kernel code;
// it is far slower than the CPU backend, and its times measure the emulation, not a GPU.
#include "core/backend.h"

namespace kvs {

class EmulatedCudaBackend final : public Backend {
  public:
    std::string name() const override { return "cuda-emulated"; }
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
    std::vector<OpCall>* each() { return record_calls_ ? &calls_ : nullptr; }
};

}  // namespace kvs
