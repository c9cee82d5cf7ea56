#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/files/gguf_file.h"
#include "core/util/error.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/reference_ops.h"

namespace kvs {
namespace {

// Adds the clock ticks of one op call to the backend's per-op totals.
class OpTimer {
  public:
    OpTimer(const cpu::OpClock& clock, std::array<std::uint64_t, kOpCount>& ticks,
            std::array<int, kOpCount>& calls, Op op, bool on,
            std::vector<std::pair<Op, std::uint64_t>>* each = nullptr)
        : clock_(clock),
          ticks_(ticks),
          calls_(calls),
          op_(static_cast<int>(op)),
          on_(on),
          each_(each) {
        if (on_) start_ = clock_.now();
    }
    ~OpTimer() {
        if (!on_) return;
        const std::uint64_t t = clock_.now() - start_;
        ticks_[op_] += t;
        calls_[op_] += 1;
        if (each_) each_->emplace_back(static_cast<Op>(op_), t);
    }

  private:
    const cpu::OpClock& clock_;
    std::array<std::uint64_t, kOpCount>& ticks_;
    std::array<int, kOpCount>& calls_;
    int op_;
    bool on_;
    std::vector<std::pair<Op, std::uint64_t>>* each_;
    std::uint64_t start_ = 0;
};

}  // namespace

CpuBackend::CpuBackend(bool time_ops)
    : time_ops_(time_ops),
      // a bad KVSCOPE_ISA or KVSCOPE_DOT stops here, before any work, not mid-generation
      dot_((cpu::active_kernels(), cpu::active_dot_path())),
      kernels_(&cpu::active_kernels()),
      quant_(cpu::quant_matmul_for(dot_)) {}

void CpuBackend::set_simd_path(cpu::Isa isa) {
    const cpu::Kernels* k = cpu::kernels_for(isa);
    const auto have = cpu::available_isas();
    if (!k || std::find(have.begin(), have.end(), isa) == have.end())
        throw Error(std::string("SIMD path ") + cpu::isa_name(isa) + " is not available here");
    kernels_ = k;
}

void CpuBackend::reset_op_times() {
    times_ = {};
    ticks_ = {};
    call_ticks_.clear();
}

std::vector<OpCall> CpuBackend::op_calls() {
    std::vector<OpCall> out;
    out.reserve(call_ticks_.size());
    for (const auto& [op, t] : call_ticks_) out.push_back({op, clock_.seconds(t)});
    return out;
}

OpTimes CpuBackend::op_times() {
    for (int i = 0; i < kOpCount; ++i) times_.seconds[i] = clock_.seconds(ticks_[i]);
    return times_;
}

std::string CpuBackend::device() const {
    if (reference_ops_) return "CPU, 1 thread, plain reference ops";
#ifdef __EMSCRIPTEN__
    // The page: what the browser runs (one thread: a static host allows no shared memory).
    return cpu::active_isa() == cpu::Isa::simd128 ? "WebAssembly, SIMD128" : "WebAssembly, no SIMD";
#endif
    return "CPU, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
}

void CpuBackend::set_threads(int n) {
    if (n < 1 || n > 256) throw Error("threads must be 1..256, not " + std::to_string(n));
    if (n == threads_) return;
    pool_ = n > 1 ? std::make_unique<cpu::ThreadPool>(n) : nullptr;
    threads_ = n;
}

// calloc, not new float[n](): a large calloc gets fresh zero pages from the kernel that become
// resident only when written, so a KV cache sized for the whole context (113 MB on the 1 GB
// model) costs memory only for the positions used, as in run.c.
DeviceSpan CpuBackend::alloc(std::size_t n) {
    auto* p = static_cast<float*>(std::calloc(n ? n : 1, sizeof(float)));
    if (!p) throw std::bad_alloc();
    return {p, n};
}
void CpuBackend::release(DeviceSpan s) noexcept {
    std::free(s.data);
}

void CpuBackend::upload(DeviceSpan dst, const float* src, std::size_t n) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Transfer, time_ops_);
    std::memcpy(dst.data, src, n * sizeof(float));
}

void CpuBackend::download(float* dst, DeviceSpan src, std::size_t n) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Transfer, time_ops_);
    std::memcpy(dst, src.data, n * sizeof(float));
}

void CpuBackend::copy_rows(DeviceSpan dst, std::size_t dst_stride, DeviceSpan src,
                           std::size_t src_stride, std::size_t rows, std::size_t row_len) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Transfer, time_ops_);
    for (std::size_t r = 0; r < rows; ++r)
        std::memcpy(dst.data + r * dst_stride, src.data + r * src_stride, row_len * sizeof(float));
}

void CpuBackend::embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Embed, time_ops_, each());
    for (int t = 0; t < T; ++t)
        std::memcpy(x.data + std::size_t(t) * dim, table.data + std::size_t(tokens[t]) * dim,
                    dim * sizeof(float));
}

void CpuBackend::rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim, float eps) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::RmsNorm, time_ops_, each());
    if (reference_ops_)
        ref::rmsnorm(out.data, x.data, w.data, T, dim, eps);
    else
        kernels_->rmsnorm(out.data, x.data, w.data, T, dim, eps);
}

void CpuBackend::matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Matmul, time_ops_, each());
    if (reference_ops_)
        ref::matmul(out.data, x.data, w.data, T, n, d);
    else
        kernels_->matmul(out.data, x.data, w.data, T, n, d, pool_.get());
}

void CpuBackend::set_dot_path(cpu::DotPath p) {
    const auto have = cpu::available_dot_paths();
    if (std::find(have.begin(), have.end(), p) == have.end())
        throw Error(std::string("dot-product path ") + cpu::dot_path_name(p) +
                    ": this CPU lacks it");
    dot_ = p;
    quant_ = cpu::quant_matmul_for(p);
}

bool CpuBackend::runs_compact(GgmlType) const {
    return true;  // every type a GGUF file may hold (core/files/gguf_file.h)
}

void CpuBackend::embed_compact(DeviceSpan x, GgmlType type, const unsigned char* table,
                               const int* tokens, int T, int dim) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Embed, time_ops_, each());
    const std::size_t row = ggml_row_bytes(type, dim);
    for (int t = 0; t < T; ++t)
        dequantize_values(type, table + std::size_t(tokens[t]) * row, dim,
                          x.data + std::size_t(t) * dim);
}

void CpuBackend::matmul_compact(DeviceSpan out, DeviceSpan x, GgmlType type, const unsigned char* w,
                                int T, int n, int d) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Matmul, time_ops_, each());
    if (reference_ops_) {
        dequantised_.resize(std::size_t(d) * n);
        dequantize_values(type, w, dequantised_.size(), dequantised_.data());
        ref::matmul(out.data, x.data, dequantised_.data(), T, n, d);
    } else if (quant_ && cpu::integer_dot_reads(type)) {
        quant_(out.data, x.data, type, w, T, n, d, pool_.get());
    } else {
        kernels_->matmul_compact(out.data, x.data, type, w, T, n, d, pool_.get());
    }
}

void CpuBackend::rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim,
                      int head_dim, DeviceSpan inv_freq) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Rope, time_ops_, each());
    if (reference_ops_)
        ref::rope(q.data, k.data, T, pos0, dim, kv_dim, head_dim, inv_freq.data);
    else
        rope_.apply(q.data, k.data, T, pos0, dim, kv_dim, head_dim, inv_freq.data);
}

void CpuBackend::kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v,
                           int pos0, int T, int kv_dim) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::KvAppend, time_ops_, each());
    const std::size_t row = std::size_t(pos0) * kv_dim, n = std::size_t(T) * kv_dim;
    std::memcpy(cache_k.data + row, k.data, n * sizeof(float));
    std::memcpy(cache_v.data + row, v.data, n * sizeof(float));
}

void CpuBackend::attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                           DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                           int head_dim, bool causal) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Attention, time_ops_, each());
    float* p = probs.empty() ? nullptr : probs.data;
    if (reference_ops_)
        ref::attention(out.data, q.data, cache_k.data, cache_v.data, p, T, pos0, n_heads,
                       n_kv_heads, head_dim, causal);
    else
        kernels_->attention(out.data, q.data, cache_k.data, cache_v.data, p, T, pos0, n_heads,
                            n_kv_heads, head_dim, pool_.get(), scratch_, causal);
}

void CpuBackend::attention_paged(DeviceSpan out, DeviceSpan q, DeviceSpan pool_k, DeviceSpan pool_v,
                                 DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                                 int head_dim, bool causal, const PagedKeys& keys) {
    keys.check();
    OpTimer timer(clock_, ticks_, times_.calls, Op::Attention, time_ops_, each());
    float* p = probs.empty() ? nullptr : probs.data;
    // Each key's K and V row named where its block holds it (a moved sink's K where it was moved).
    const std::size_t kv = std::size_t(n_kv_heads) * head_dim;
    const int n_keys = pos0 + T;
    key_k_.resize(n_keys);
    key_v_.resize(n_keys);
    for (int s = 0; s < n_keys; ++s) {
        const std::size_t row = keys.row(s);
        key_k_[s] = s < keys.sinks && !keys.sink_k.empty() ? keys.sink_k.data + std::size_t(s) * kv
                                                           : pool_k.data + row * kv;
        key_v_[s] = pool_v.data + row * kv;
    }
    const float* const* k_rows = key_k_.data();
    const float* const* v_rows = key_v_.data();
    if (!reference_ops_)
        return cpu::attention_rows(out.data, q.data, k_rows, v_rows, p, T, pos0, n_heads,
                                   n_kv_heads, head_dim, pool_.get(), scratch_, causal);
    // The plain loop reads contiguous rows: the listed ones copied into gathered_ first.
    const std::size_t n = std::size_t(n_keys);
    gathered_.resize(2 * n * kv);
    float *k = gathered_.data(), *v = k + n * kv;
    for (std::size_t s = 0; s < n; ++s) {
        std::memcpy(k + s * kv, k_rows[s], kv * sizeof(float));
        std::memcpy(v + s * kv, v_rows[s], kv * sizeof(float));
    }
    ref::attention(out.data, q.data, k, v, p, T, pos0, n_heads, n_kv_heads, head_dim, causal);
}

void CpuBackend::swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::SwiGLU, time_ops_, each());
    if (reference_ops_)
        ref::swiglu(h1.data, h3.data, n);
    else
        kernels_->swiglu(h1.data, h3.data, n);
}

// GPT-2's two ops: one implementation for both paths (kernels/cpu/reference_ops.h says why).
void CpuBackend::layernorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, DeviceSpan b, int T, int dim,
                           float eps) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::LayerNorm, time_ops_, each());
    ref::layernorm(out.data, x.data, w.data, b.data, T, dim, eps);
}

void CpuBackend::gelu(DeviceSpan h, std::size_t n) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Gelu, time_ops_, each());
    ref::gelu(h.data, n);
}

void CpuBackend::add(DeviceSpan x, DeviceSpan y, std::size_t n) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Add, time_ops_, each());
    if (reference_ops_)
        ref::add(x.data, y.data, n);
    else
        kernels_->add(x.data, y.data, n);
}

void CpuBackend::add_bias(DeviceSpan x, DeviceSpan b, int T, int n) {
    OpTimer timer(clock_, ticks_, times_.calls, Op::Add, time_ops_, each());
    // Row by row through the residual add: the same bits as adding the bias to each row alone.
    for (int t = 0; t < T; ++t) {
        float* row = x.data + std::size_t(t) * n;
        if (reference_ops_)
            ref::add(row, b.data, n);
        else
            kernels_->add(row, b.data, n);
    }
}

}  // namespace kvs
