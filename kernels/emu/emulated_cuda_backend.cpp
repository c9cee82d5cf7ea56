#include "kernels/emu/emulated_cuda_backend.h"

#include <chrono>
#include <cstring>

#include "kernels/emu/emu_kernels.h"

namespace kvs {
namespace {

// Wall time of one emulated op, added to the backend's per-op totals and, while the op strip
// records, to the list of calls.
class OpTimer {
  public:
    OpTimer(OpTimes& t, Op op, std::vector<OpCall>* each = nullptr)
        : t_(t), op_(op), each_(each), start_(std::chrono::steady_clock::now()) {}
    ~OpTimer() {
        const auto i = static_cast<int>(op_);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        t_.seconds[i] += s;
        t_.calls[i] += 1;
        if (each_) each_->push_back({op_, s});
    }
    OpTimer(const OpTimer&) = delete;
    OpTimer& operator=(const OpTimer&) = delete;

  private:
    OpTimes& t_;
    Op op_;
    std::vector<OpCall>* each_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::string EmulatedCudaBackend::device() const {
    return "CPU emulating CUDA launches (one thread at a time; not GPU times)";
}

DeviceSpan EmulatedCudaBackend::alloc(std::size_t n) {
    return {new float[n](), n};
}
void EmulatedCudaBackend::release(DeviceSpan s) {
    delete[] s.data;
}

void EmulatedCudaBackend::upload(DeviceSpan dst, const float* src, std::size_t n) {
    OpTimer timer(times_, Op::Transfer);
    std::memcpy(dst.data, src, n * sizeof(float));
}

void EmulatedCudaBackend::download(float* dst, DeviceSpan src, std::size_t n) {
    OpTimer timer(times_, Op::Transfer);
    std::memcpy(dst, src.data, n * sizeof(float));
}

void EmulatedCudaBackend::embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) {
    OpTimer timer(times_, Op::Embed, each());
    emu::embed(kern::embed_shape(T, dim), {x.data, table.data, tokens, T, dim});
}

void EmulatedCudaBackend::rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim) {
    OpTimer timer(times_, Op::RmsNorm, each());
    emu::rmsnorm(kern::rmsnorm_shape(T), {out.data, x.data, w.data, T, dim});
}

void EmulatedCudaBackend::matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) {
    OpTimer timer(times_, Op::Matmul, each());
    const kern::MatmulArgs a{out.data, x.data, w.data, T, n, d};
    if (kern::matmul_uses_matvec(T))
        emu::matvec(kern::matvec_shape(d), a);
    else
        emu::matmul_tiled(kern::matmul_tiled_shape(T, d), a);
}

void EmulatedCudaBackend::rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim,
                               int head_dim) {
    OpTimer timer(times_, Op::Rope, each());
    emu::rope(kern::rope_shape(T, dim), {q.data, k.data, T, pos0, dim, kv_dim, head_dim});
}

void EmulatedCudaBackend::kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k,
                                    DeviceSpan v, int pos0, int T, int kv_dim) {
    OpTimer timer(times_, Op::KvAppend, each());
    emu::kv_append(kern::kv_append_shape(T, kv_dim),
                   {cache_k.data, cache_v.data, k.data, v.data, pos0, T, kv_dim});
}

void EmulatedCudaBackend::attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k,
                                    DeviceSpan cache_v, DeviceSpan probs, int T, int pos0,
                                    int n_heads, int n_kv_heads, int head_dim) {
    OpTimer timer(times_, Op::Attention, each());
    const kern::AttentionArgs a{
        out.data, q.data, cache_k.data, cache_v.data, probs.empty() ? nullptr : probs.data,
        T,        pos0,   n_heads,      n_kv_heads,   head_dim};
    if (kern::attention_uses_decode(T))
        emu::attention_decode(kern::attention_decode_shape(pos0, n_heads, n_kv_heads), a);
    else
        emu::attention_prefill(kern::attention_prefill_shape(T, pos0, n_heads), a);
}

void EmulatedCudaBackend::swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) {
    OpTimer timer(times_, Op::SwiGLU, each());
    emu::swiglu(kern::elementwise_shape(n), {h1.data, h3.data, n});
}

void EmulatedCudaBackend::add(DeviceSpan x, DeviceSpan y, std::size_t n) {
    OpTimer timer(times_, Op::Add, each());
    emu::add(kern::elementwise_shape(n), {x.data, y.data, n});
}

}  // namespace kvs
