#include "kernels/cpu/cpu_backend.h"

#include <chrono>
#include <cstring>

#include "core/error.h"

namespace kvs {
namespace {

// Adds the wall time of one op call to the backend's per-op totals.
class OpTimer {
  public:
    OpTimer(OpTimes& t, Op op, bool on) : t_(t), op_(op), on_(on) {
        if (on_) start_ = std::chrono::steady_clock::now();
    }
    ~OpTimer() {
        if (!on_) return;
        const auto i = static_cast<int>(op_);
        t_.seconds[i] +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        t_.calls[i] += 1;
    }

  private:
    OpTimes& t_;
    Op op_;
    bool on_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::string CpuBackend::device() const {
    return "CPU, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
}

bool CpuBackend::openmp_compiled() {
#if defined(_OPENMP)
    return true;
#else
    return false;
#endif
}

void CpuBackend::set_threads(int n) {
    if (n < 1) throw Error("threads must be at least 1");
    if (n > 1 && !openmp_compiled())
        throw Error("this build has no OpenMP, so the CPU backend runs on 1 thread only");
    threads_ = n;
}

DeviceSpan CpuBackend::alloc(std::size_t n) {
    return {new float[n](), n};
}
void CpuBackend::release(DeviceSpan s) {
    delete[] s.data;
}

void CpuBackend::upload(DeviceSpan dst, const float* src, std::size_t n) {
    OpTimer timer(times_, Op::Transfer, time_ops_);
    std::memcpy(dst.data, src, n * sizeof(float));
}

void CpuBackend::download(float* dst, DeviceSpan src, std::size_t n) {
    OpTimer timer(times_, Op::Transfer, time_ops_);
    std::memcpy(dst, src.data, n * sizeof(float));
}

void CpuBackend::embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) {
    OpTimer timer(times_, Op::Embed, time_ops_);
    for (int t = 0; t < T; ++t)
        std::memcpy(x.data + std::size_t(t) * dim, table.data + std::size_t(tokens[t]) * dim,
                    dim * sizeof(float));
}

void CpuBackend::rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim) {
    OpTimer timer(times_, Op::RmsNorm, time_ops_);
    cpu::rmsnorm(out.data, x.data, w.data, T, dim);
}

void CpuBackend::matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) {
    OpTimer timer(times_, Op::Matmul, time_ops_);
    cpu::matmul(out.data, x.data, w.data, T, n, d, threads_);
}

void CpuBackend::rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim,
                      int head_dim) {
    OpTimer timer(times_, Op::Rope, time_ops_);
    rope_.apply(q.data, k.data, T, pos0, dim, kv_dim, head_dim);
}

void CpuBackend::kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v,
                           int pos0, int T, int kv_dim) {
    OpTimer timer(times_, Op::KvAppend, time_ops_);
    const std::size_t row = std::size_t(pos0) * kv_dim, n = std::size_t(T) * kv_dim;
    std::memcpy(cache_k.data + row, k.data, n * sizeof(float));
    std::memcpy(cache_v.data + row, v.data, n * sizeof(float));
}

void CpuBackend::attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                           DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                           int head_dim) {
    OpTimer timer(times_, Op::Attention, time_ops_);
    cpu::attention(out.data, q.data, cache_k.data, cache_v.data,
                   probs.empty() ? nullptr : probs.data, T, pos0, n_heads, n_kv_heads, head_dim,
                   threads_, scratch_);
}

void CpuBackend::swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) {
    OpTimer timer(times_, Op::SwiGLU, time_ops_);
    cpu::swiglu(h1.data, h3.data, n);
}

void CpuBackend::add(DeviceSpan x, DeviceSpan y, std::size_t n) {
    OpTimer timer(times_, Op::Add, time_ops_);
    cpu::add(x.data, y.data, n);
}

}  // namespace kvs
