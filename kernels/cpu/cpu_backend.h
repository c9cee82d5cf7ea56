#pragma once
// The CPU backend: host memory, the fast ops of fast_ops.h (same results for a row alone or in a
// batch, on any number of threads), per-op wall-clock timing, a thread pool (thread_pool.h).
// reference_ops.h holds the plain run.c-order loops the fast ops are tested against.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/model/backend.h"
#include "kernels/cpu/fast_ops.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/op_clock.h"
#include "kernels/cpu/quant_dot.h"
#include "kernels/cpu/thread_pool.h"

namespace kvs {

class CpuBackend final : public Backend {
  public:
    // Throws kvs::Error when KVSCOPE_ISA names a SIMD path this CPU lacks (isa.h).
    explicit CpuBackend(bool time_ops = true);
    std::string name() const override { return "cpu"; }
    std::string device() const override;

    // Threads for matmul and attention (1, the default, starts none; small ops stay on the
    // calling thread whatever n is). Throws kvs::Error for n outside 1..256.
    void set_threads(int n);
    int threads() const { return threads_; }
    // Per-op timing costs two clock reads per op (op_clock.h); benchmarks switch it off to
    // measure that cost.
    void set_time_ops(bool on) { time_ops_ = on; }
    bool time_ops() const { return time_ops_; }
    // The plain run.c-order loops of reference_ops.h instead of the fast ops (1 thread): the
    // baseline on the same machine that the bench measures the fast ops against.
    void set_reference_ops(bool on) { reference_ops_ = on; }
    bool reference_ops() const { return reference_ops_; }
    // How quantised weights (Q8_0, Q4_0, K-quants) are multiplied (quant_dot.h): an integer path
    // (the default: active_dot_path(), KVSCOPE_DOT), or float (widened to float32, exact to the
    // dequantised matrix: for checking). Throws kvs::Error for a path this CPU lacks.
    void set_dot_path(cpu::DotPath p);
    cpu::DotPath dot_path() const { return dot_; }
    // The SIMD path of the fast ops (isa.h): active_isa() unless set here (the op harness runs
    // every path in one process). Throws kvs::Error for a path this binary or CPU lacks.
    void set_simd_path(cpu::Isa isa);
    cpu::Isa simd_path() const { return kernels_->isa; }

    DeviceSpan alloc(std::size_t n) override;
    void release(DeviceSpan s) noexcept override;
    void upload(DeviceSpan dst, const float* src, std::size_t n) override;
    void download(float* dst, DeviceSpan src, std::size_t n) override;
    // Host memory is this backend's memory: the weights are used where they lie (the mapping).
    DeviceSpan adopt_host(const float* src, std::size_t n) override {
        return {const_cast<float*>(src), n};
    }
    void release_adopted(DeviceSpan) noexcept override {}

    void embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) override;
    void rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim, float eps) override;
    void matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) override;
    // Every GGUF type (fast_ops.h's matmul_compact; with reference ops, the matrix is
    // dequantised first and multiplied by the plain loop). A compact embedding table's rows are
    // dequantised by core's one decoder.
    bool runs_compact(GgmlType type) const override;
    void matmul_compact(DeviceSpan out, DeviceSpan x, GgmlType type, const unsigned char* w, int T,
                        int n, int d) override;
    void embed_compact(DeviceSpan x, GgmlType type, const unsigned char* table, const int* tokens,
                       int T, int dim) override;
    void rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim, int head_dim,
              DeviceSpan inv_freq) override;
    void kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v, int pos0,
                   int T, int kv_dim) override;
    void attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                   DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads, int head_dim,
                   bool causal) override;
    // A paged cache read in place: each key's row address through the table, then the
    // attention over keys named one by one (fast_ops.h's attention_rows).
    bool attends_paged_in_place() const override { return true; }
    void attention_paged(DeviceSpan out, DeviceSpan q, DeviceSpan pool_k, DeviceSpan pool_v,
                         DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                         int head_dim, bool causal, const PagedKeys& keys) override;
    void swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) override;
    void layernorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, DeviceSpan b, int T, int dim,
                   float eps) override;
    void gelu(DeviceSpan h, std::size_t n) override;
    void add(DeviceSpan x, DeviceSpan y, std::size_t n) override;
    void add_bias(DeviceSpan x, DeviceSpan b, int T, int n) override;
    void copy_rows(DeviceSpan dst, std::size_t dst_stride, DeviceSpan src, std::size_t src_stride,
                   std::size_t rows, std::size_t row_len) override;

    void reset_op_times() override;
    OpTimes op_times() override;
    std::vector<OpCall> op_calls() override;

  private:
    bool time_ops_;
    bool reference_ops_ = false;
    cpu::DotPath dot_;
    const cpu::Kernels* kernels_;       // the fast ops of one SIMD path
    cpu::QuantMatmul quant_ = nullptr;  // dot_'s matmul, null for float
    int threads_ = 1;
    std::unique_ptr<cpu::ThreadPool> pool_;  // null for 1 thread
    std::vector<float> scratch_;             // attention rows, one per thread
    std::vector<float> dequantised_;         // reference ops on compact weights: one matrix
    std::vector<float> gathered_;            // reference ops on listed K/V rows: [2, keys, kv_dim]
    std::vector<const float*> key_k_, key_v_;  // attention_paged: each key's K and V row, [keys]
    cpu::RopeTable rope_;
    cpu::OpClock clock_;
    std::array<std::uint64_t, kOpCount> ticks_{};           // per op, since reset_op_times()
    std::vector<std::pair<Op, std::uint64_t>> call_ticks_;  // per call while recording
    std::vector<std::pair<Op, std::uint64_t>>* each() {
        return record_calls_ ? &call_ticks_ : nullptr;
    }
};

}  // namespace kvs
