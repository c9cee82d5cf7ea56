// The "cuda" backend: weights and KV cache in device memory, every op one kernel launch on one
// stream (a matmul of more than one row: cuBLAS, kernels/cuda/cublas_gemm.h), host transfers only
// where the caller asks (download). Each launch is bracketed by two CUDA events; their elapsed
// times are read in synchronize()/op_times(), once the stream has passed them, so timing never
// stalls the queue between kernels. While every op is timed (the op strip), the stream is first
// held by a gate kernel until the step's ops are queued (or 128 of them), then released: the
// events then time the device running the kernels back to back, not the host issuing them.
// Errors: kernels/cuda/fault_ledger.h (release never throws; a fault is reported once, named, by
// the next sync).
//
// CUDA Graphs (core/model/step_graphs.h): a decode pass recorded once by stream capture and
// replayed by one cudaGraphLaunch per token. While capturing, ops are launched without events
// (nothing is timed, nothing waits) and read the step's token ids and positions from step_dev_,
// which set_step() fills before each replay. The fused decode kernels (core/model/fused_ops.h)
// are launched with programmatic dependent launch on sm_90 and later (KVSCOPE_CUDA_PDL=0: not).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/model/fused_ops.h"
#include "core/model/step_graphs.h"
#include "core/util/error.h"
#include "kernels/cuda/attention_plan.h"
#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/cuda_entry.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/fault_ledger.h"
#include "kernels/cuda/fused_args.h"
#include "kernels/cuda/kernel_launchers.h"
#include "kernels/cuda/op_gate.h"

#ifndef KVSCOPE_CUDA_ARCHS
#define KVSCOPE_CUDA_ARCHS "the architectures it was configured with"
#endif

namespace kvs {
namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

bool env_off(const char* name) {
    const char* v = std::getenv(name);
    return v && std::string(v) == "0";
}

// Holds its stream until the host writes `ticket` (or more) to *flag, mapped host memory; gives
// up after 2 s, so that a host that never releases it cannot hang the device.
__global__ void gate_kernel(const volatile int* flag, int ticket) {
    unsigned long long t0 = 0, t = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag < ticket) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > 2000000000ull) return;
#if __CUDA_ARCH__ >= 700
        __nanosleep(1000);
#endif
    }
}

class CudaBackend final : public Backend, public StepGraphs, public FusedOps {
  public:
    CudaBackend() {
        graphs_on_ = !env_off("KVSCOPE_CUDA_GRAPHS");
        fused_on_ = !env_off("KVSCOPE_CUDA_FUSED");
        check(cudaSetDevice(0), "cudaSetDevice");
        cudaDeviceProp p{};
        check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        device_ = describe_cuda_device(p.name, p.major, p.minor, driver, runtime);
        dependent_launch_ = p.major >= 9 && !env_off("KVSCOPE_CUDA_PDL");
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaMalloc(&step_dev_, 2 * kMaxSequences * sizeof(int)), "cudaMalloc");
        check(cudaMallocHost(&step_host_, 2 * kMaxSequences * sizeof(int)), "cudaMallocHost");
        check(cudaMalloc(&tickets_, kMaxKvHeads * sizeof(int)), "cudaMalloc");
        check(cudaMemset(tickets_, 0, kMaxKvHeads * sizeof(int)), "cudaMemset");
        // The gate's flag, where both the host and the device read it (none: no gate, where a
        // launch may wait for the device: kernels/cuda/op_gate.h).
        if (op_gate_refusal(gate_environment()).empty() && p.canMapHostMemory &&
            cudaHostAlloc(&gate_host_, sizeof(int), cudaHostAllocMapped) == cudaSuccess) {
            *gate_host_ = 0;
            if (cudaHostGetDevicePointer(&gate_dev_, gate_host_, 0) != cudaSuccess) {
                cudaFreeHost(gate_host_);
                gate_host_ = nullptr, gate_dev_ = nullptr;
            }
        }
        cudaGetLastError();
        if (!cublas_.ready()) cublas_note_ = cublas_.problem();
        warm_up();
    }
    // Everything that may use the stream goes before it: cuBLAS's handle (bound to it by
    // cublasSetStream) is closed before cudaStreamDestroy.
    ~CudaBackend() override {
        open_gate();
        cudaStreamSynchronize(stream_);
        cublas_.close();
        for (const Pending& p : pending_) {
            cudaEventDestroy(p.start);
            cudaEventDestroy(p.stop);
        }
        for (cudaEvent_t e : pool_) cudaEventDestroy(e);
        if (tokens_) cudaFree(tokens_);
        if (tokens_host_) cudaFreeHost(tokens_host_);
        if (decode_partial_) cudaFree(decode_partial_);
        if (widened_) cudaFree(widened_);
        if (tickets_) cudaFree(tickets_);
        if (gate_host_) cudaFreeHost(gate_host_);
        for (auto& [p, bytes] : compact_) cudaFree(const_cast<unsigned char*>(p));
        for (auto& [id, g] : graphs_) cudaGraphExecDestroy(g.exec);
        if (step_dev_) cudaFree(step_dev_);
        if (step_host_) cudaFreeHost(step_host_);
        for (float* p : retired_) cudaFree(p);
        cudaStreamDestroy(stream_);
    }
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    std::string name() const override { return "cuda"; }
    std::string device() const override { return device_; }
    OpTiming op_timing() const override {
        return gate_host_ ? OpTiming::EventsHeldStream : OpTiming::EventsAroundLaunches;
    }
    std::uint64_t kernel_launches() const override { return launched_; }
    // cuBLAS for T > 1 (kernels/cuda/cublas_gemm.h), or why the tiled kernel runs instead.
    void set_gemm(GemmPrecision p) { gemm_ = p; }
    std::string gemm_note() const {
        return cublas_.ready()
                   ? std::string("matmuls of more than one row: cuBLAS, ") +
                         gemm_precision_name(gemm_)
                   : "matmuls of more than one row: the tiled kernel (" + cublas_note_ + ")";
    }
    std::uint64_t device_free_bytes() const override {
        std::size_t free = 0, total = 0;  // device 0, current since the constructor
        return cudaMemGetInfo(&free, &total) == cudaSuccess ? free : 0;
    }

    DeviceSpan alloc(std::size_t n) override {
        open_gate();  // cudaMalloc may wait for the device
        void* p = nullptr;
        check(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc");
        check(cudaMemsetAsync(p, 0, n * sizeof(float), stream_), "cudaMemsetAsync");
        ++queued_;
        return {static_cast<float*>(p), n};
    }
    void release(DeviceSpan s) noexcept override {
        // cudaFree waits for the device, so no queued kernel still uses s. After a device fault
        // it returns that fault again: kept for the next synchronize(), never thrown from here.
        open_gate();
        const cudaError_t e = cudaFree(s.data);
        if (e != cudaSuccess) ledger_.keep_call("cudaFree", cudaGetErrorString(e));
    }
    float* alloc_host(std::size_t n) override {
        open_gate();
        void* p = nullptr;
        check(cudaMallocHost(&p, n * sizeof(float)), "cudaMallocHost");
        return static_cast<float*>(p);
    }
    void release_host(float* p) noexcept override {
        open_gate();
        const cudaError_t e = cudaFreeHost(p);
        if (e != cudaSuccess) ledger_.keep_call("cudaFreeHost", cudaGetErrorString(e));
    }
    void copy_rows(DeviceSpan dst, std::size_t dst_stride, DeviceSpan src, std::size_t src_stride,
                   std::size_t rows, std::size_t row_len) override {
        if (rows == 0 || row_len == 0) return;
        timed(Op::Transfer, [&] {
            check(cudaMemcpy2DAsync(dst.data, dst_stride * sizeof(float), src.data,
                                    src_stride * sizeof(float), row_len * sizeof(float), rows,
                                    cudaMemcpyDeviceToDevice, stream_),
                  "cudaMemcpy2DAsync (copy_rows)");
        });
    }
    // A copy from or to pageable host memory may wait for the stream: the gate opens first.
    void upload(DeviceSpan dst, const float* src, std::size_t n) override {
        open_gate();
        timed(Op::Transfer, [&] {
            check(
                cudaMemcpyAsync(dst.data, src, n * sizeof(float), cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync (upload)");
        });
        // src is pageable host memory the caller may free: wait until it has been read.
        wait();
    }
    void download(float* dst, DeviceSpan src, std::size_t n) override {
        open_gate();
        timed(Op::Transfer, [&] {
            check(
                cudaMemcpyAsync(dst, src.data, n * sizeof(float), cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync (download)");
        });
        wait();
    }

    void embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) override {
        timed(Op::Embed, [&] {
            if (capturing_) {  // the step's token ids, on the device already (set_step)
                kern::launch_embed(kern::embed_shape(T, dim), stream_,
                                   {x.data, table.data, step_dev_, T, dim});
                return;
            }
            // The token ids come from the host; they travel in the embed op's time.
            kern::launch_embed(kern::embed_shape(T, dim), stream_,
                               {x.data, table.data, ints_to_device(tokens, T), T, dim});
        });
    }
    void rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim, float eps) override {
        timed(Op::RmsNorm, [&] {
            kern::launch_rmsnorm(kern::rmsnorm_shape(T, blocks_.rmsnorm), stream_,
                                 {out.data, x.data, w.data, T, dim, eps});
        });
    }
    void matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) override {
        matmul_any(out, x, w.data, T, n, d);
    }
    bool runs_compact(GgmlType type) const override {  // F16, BF16 (0 is float32)
        return kern::weight_kind(type) > kern::kWeightF32;
    }
    void matmul_compact(DeviceSpan out, DeviceSpan x, GgmlType type, const unsigned char* w, int T,
                        int n, int d) override {
        if (!runs_compact(type)) Backend::matmul_compact(out, x, type, w, T, n, d);
        matmul_any(out, x, kern::MatrixRef(w, kern::weight_kind(type)), T, n, d);
    }
    void embed_compact(DeviceSpan x, GgmlType type, const unsigned char* table, const int* tokens,
                       int T, int dim) override {
        if (!runs_compact(type)) Backend::embed_compact(x, type, table, tokens, T, dim);
        const kern::MatrixRef t(table, kern::weight_kind(type));
        timed(Op::Embed, [&] {
            kern::launch_embed(
                kern::embed_shape(T, dim), stream_,
                {x.data, t, capturing_ ? step_dev_ : ints_to_device(tokens, T), T, dim});
        });
    }
    const unsigned char* adopt_compact(const unsigned char* host, std::size_t bytes) override {
        open_gate();
        void* p = nullptr;
        check(cudaMalloc(&p, bytes), "cudaMalloc");
        const cudaError_t e = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            cudaFree(p);
            check(e, "cudaMemcpy (compact weights)");
        }
        compact_[static_cast<const unsigned char*>(p)] = bytes;
        return static_cast<const unsigned char*>(p);
    }
    void release_compact(const unsigned char* adopted) noexcept override {
        open_gate();
        const auto it = compact_.find(adopted);
        if (it == compact_.end()) return;
        const cudaError_t e = cudaFree(const_cast<unsigned char*>(adopted));
        if (e != cudaSuccess) ledger_.keep_call("cudaFree", cudaGetErrorString(e));
        compact_.erase(it);
    }
    void rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim, int head_dim,
              DeviceSpan inv_freq) override {
        timed(Op::Rope, [&] {
            kern::launch_rope(
                kern::rope_shape(T, dim), stream_,
                {q.data, k.data, T, pos0, dim, kv_dim, head_dim, inv_freq.data, step_position()});
        });
    }
    void kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v, int pos0,
                   int T, int kv_dim) override {
        timed(Op::KvAppend, [&] {
            kern::launch_kv_append(
                kern::kv_append_shape(T, kv_dim), stream_,
                {cache_k.data, cache_v.data, k.data, v.data, pos0, T, kv_dim, step_position()});
        });
    }
    // The new rows into their blocks through the table, copied to the device first.
    void kv_append_paged(DeviceSpan pool_k, DeviceSpan pool_v, DeviceSpan k, DeviceSpan v, int pos0,
                         int T, int kv_dim, const BlockTable& table) override {
        if (capturing_) throw Error("a paged K/V append cannot be recorded into a decode graph");
        table.check();
        kern::KvAppendArgs a{pool_k.data, pool_v.data, k.data, v.data, pos0, T, kv_dim};
        a.block_size = table.block_size;
        timed(Op::KvAppend, [&] {  // the table's copy is part of the op's time
            a.block_table = ints_to_device(table.blocks, table.size);
            kern::launch_kv_append(kern::kv_append_shape(T, kv_dim), stream_, a);
        });
    }
    void attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                   DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads, int head_dim,
                   bool causal) override {
        kern::AttentionPlan p = kern::plan_attention(
            {out, q, cache_k, cache_v, probs, T, pos0, n_heads, n_kv_heads, head_dim, causal},
            {capturing_, step_position(), capture_keys_}, blocks_.attention);
        launch_attention(p, nullptr);
    }
    // A paged cache read in place: the attention kernels through the block table, copied to the
    // device first (attention.cuh's key_row).
    bool attends_paged_in_place() const override { return true; }
    void attention_paged(DeviceSpan out, DeviceSpan q, DeviceSpan pool_k, DeviceSpan pool_v,
                         DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                         int head_dim, bool causal, const PagedKeys& keys) override {
        if (capturing_) throw Error("a paged attention cannot be recorded into a decode graph");
        keys.check();
        kern::AttentionPlan p = kern::plan_attention(
            {out, q, pool_k, pool_v, probs, T, pos0, n_heads, n_kv_heads, head_dim, causal},
            {false, nullptr, 0}, blocks_.attention);
        kern::plan_paged(p, keys, nullptr);
        launch_attention(p, &keys.table);
    }
    void swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) override {
        timed(Op::SwiGLU, [&] {
            kern::launch_swiglu(kern::elementwise_shape(n, blocks_.elementwise), stream_,
                                {h1.data, h3.data, n});
        });
    }
    void layernorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, DeviceSpan b, int T, int dim,
                   float eps) override {
        timed(Op::LayerNorm, [&] {
            kern::launch_layernorm(kern::layernorm_shape(T, blocks_.layernorm), stream_,
                                   {out.data, x.data, w.data, b.data, T, dim, eps});
        });
    }
    void gelu(DeviceSpan h, std::size_t n) override {
        timed(Op::Gelu, [&] {
            kern::launch_gelu(kern::elementwise_shape(n, blocks_.elementwise), stream_,
                              {h.data, n});
        });
    }
    void add(DeviceSpan x, DeviceSpan y, std::size_t n) override {
        timed(Op::Add, [&] {
            kern::launch_add(kern::elementwise_shape(n, blocks_.elementwise), stream_,
                             {x.data, y.data, n});
        });
    }
    void add_bias(DeviceSpan x, DeviceSpan b, int T, int n) override {
        const std::size_t all = std::size_t(T) * n;
        timed(Op::Add, [&] {
            kern::launch_add(kern::elementwise_shape(all, blocks_.elementwise), stream_,
                             {x.data, b.data, all, std::size_t(n)});
        });
    }

    void set_block_sizes(const kern::BlockSizes& b) {
        blocks_ = b;
        ++partial_epoch_;  // graphs recorded with the old sizes are refused
    }

    // FusedOps (core/model/fused_ops.h): the fused decode kernels, each one launch.
    FusedOps* fused() override { return this; }
    bool fused_on() const override { return fused_on_; }
    void set_fused_on(bool on) override { fused_on_ = on; }
    bool fused_reads(GgmlType type) const override { return kern::weight_kind(type) >= 0; }
    bool fused_fits(int n_heads, int n_kv_heads, int head_dim) const override {
        return n_kv_heads <= kMaxKvHeads &&
               kern::attention_chunk_keys(n_heads / n_kv_heads, head_dim, false) > 0;
    }
    void norm_qkv(const NormQkv& a) override {
        kern::FusedPlaces at;
        at.token = a.embed.empty() ? nullptr
                   : capturing_    ? step_dev_ + capture_seq_
                                   : ints_to_device(a.token, 1);
        at.pos_at = step_position();
        const kern::FusedQkvArgs k = kern::fused_qkv_args(a, at);
        timed(Op::Fused, [&] {
            kern::launch_fused_norm_qkv(kern::fused_qkv_shape(a.dim, a.kv_dim), stream_, k,
                                        dependent_launch_);
        });
    }
    void attention(const Attend& a) override {
        kern::FusedPlaces at;
        at.pos_at = step_position();
        at.partial = ensure_partial(kern::decode_partial_floats_for_cache(
            a.cache_k.size, a.n_heads, a.n_kv_heads, a.head_dim));
        at.tickets = tickets_;
        at.max_keys = capture_keys_;
        const kern::FusedAttentionArgs k = kern::fused_attention_args(a, at);
        const kern::LaunchShape s = kern::fused_attention_launch(a, at);
        timed(Op::Fused, [&] { kern::launch_fused_attention(s, stream_, k, dependent_launch_); });
    }
    void matvec_add(DeviceSpan x, DeviceSpan in, const FusedMatrix& w, int n, int d) override {
        const kern::FusedMatvecAddArgs k{x.data, in.data, kern::matrix_ref(w), n, d, 0};
        timed(Op::Fused, [&] {
            kern::launch_fused_matvec_add(kern::fused_rows_shape(d), stream_, k, dependent_launch_);
        });
    }
    void norm_gate_up(DeviceSpan h, DeviceSpan x, DeviceSpan norm, const FusedMatrix& w1,
                      const FusedMatrix& w3, int dim, int hidden, float eps) override {
        const kern::FusedGateUpArgs k{
            x.data, norm.data, kern::matrix_ref(w1), kern::matrix_ref(w3), h.data, dim,
            hidden, eps};
        timed(Op::Fused, [&] {
            kern::launch_fused_norm_gate_up(kern::fused_rows_shape(hidden, dim), stream_, k,
                                            dependent_launch_);
        });
    }
    void norm_logits(DeviceSpan logits, DeviceSpan x, DeviceSpan norm, const FusedMatrix& w,
                     int dim, int vocab, float eps) override {
        const kern::FusedLogitsArgs k{x.data, norm.data, kern::matrix_ref(w), logits.data, dim,
                                      vocab,  eps};
        timed(Op::Fused, [&] {
            kern::launch_fused_norm_logits(kern::fused_rows_shape(vocab, dim), stream_, k,
                                           dependent_launch_);
        });
    }

    StepGraphs* graphs() override { return this; }
    bool graphs_on() const override { return graphs_on_; }
    void set_graphs_on(bool on) override { graphs_on_ = on; }
    void set_step(const int* tokens, const int* positions, int n) override {
        open_gate();  // the host copy below is refilled only once the stream has passed it
        if (n < 0 || n > kMaxSequences)
            throw Error("a graph step of " + std::to_string(n) + " sequences");
        // The previous step's copy finished at that step's download (its sync): safe to refill.
        std::copy(tokens, tokens + n, step_host_);
        std::copy(positions, positions + n, step_host_ + kMaxSequences);
        check(cudaMemcpyAsync(step_dev_, step_host_, 2 * kMaxSequences * sizeof(int),
                              cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync (graph step)");
        ++queued_;
    }
    void begin_capture() override {
        if (capturing_) throw Error("a graph capture inside a graph capture");
        open_gate();  // a capture records the stream's work; nothing may be held on it
        // Relaxed: decode attention's first cudaMalloc may happen while recording.
        check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed),
              "cudaStreamBeginCapture");
        capturing_ = true;
        capture_seq_ = 0;
        capture_kernels_ = 0;
        capture_epoch_ = partial_epoch_;
    }
    void position_of(int seq, int max_keys) override {
        if (seq < 0 || seq >= kMaxSequences)
            throw Error("no graph step sequence " + std::to_string(seq));
        capture_seq_ = seq;
        capture_keys_ = max_keys;
    }
    int end_capture() override {
        if (!capturing_) throw Error("end of a graph capture that was not begun");
        capturing_ = false;
        cudaGraph_t graph = nullptr;
        check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
        cudaGraphExec_t exec = nullptr;
        const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        check(e, "cudaGraphInstantiate");
        const int id = next_graph_++;
        graphs_[id] = {exec, capture_epoch_, capture_kernels_};
        return id;
    }
    void abort_capture() noexcept override {
        if (!capturing_) return;
        capturing_ = false;
        cudaGraph_t graph = nullptr;
        if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
        cudaGetLastError();  // the capture's own error was what the caller is throwing
    }
    bool replay(int id) override {
        const auto it = graphs_.find(id);
        if (it == graphs_.end() || it->second.epoch != partial_epoch_) return false;
        check(cudaGraphLaunch(it->second.exec, stream_), "cudaGraphLaunch");
        launched_ += it->second.kernels;
        ++queued_;
        ledger_.queued("the decode graph");
        if (ledger_.sync_each_op()) wait();
        return true;
    }
    void drop(int id) noexcept override {
        const auto it = graphs_.find(id);
        if (it == graphs_.end()) return;
        cudaGraphExecDestroy(it->second.exec);
        graphs_.erase(it);
    }

    void synchronize() override {
        wait();
        resolve();
    }
    void reset_op_times() override {
        synchronize();
        times_ = {};
        calls_.clear();
    }
    std::vector<OpCall> op_calls() override {
        synchronize();
        return calls_;
    }
    OpTimes op_times() override {
        synchronize();
        return times_;
    }

  private:
    struct Pending {
        Op op;
        cudaEvent_t start, stop;
    };

    cudaEvent_t event() {
        if (!pool_.empty()) {
            cudaEvent_t e = pool_.back();
            pool_.pop_back();
            return e;
        }
        cudaEvent_t e;
        check(cudaEventCreate(&e), "cudaEventCreate");
        return e;
    }

    // Waits for the stream; a fault of queued work is kept and thrown once (fault_ledger.h). A
    // stream with nothing queued since the last wait is not waited for again (a session's
    // synchronize() and op_times() after the step's download cost no second sync).
    void wait() {
        open_gate();
        tokens_used_ = 0;  // the staged token copies are done once the stream is
        if (queued_ > 0) {
            queued_ = 0;
            const cudaError_t e = cudaStreamSynchronize(stream_);
            if (e != cudaSuccess) ledger_.keep_sync(cudaGetErrorString(e));
        }
        // A fused attention cut short by a fault leaves its tickets part-counted: zeroed again,
        // so the next launch starts from zero as the kernel assumes (fused_decode.cuh).
        if (ledger_.broken() && !tickets_reset_) {
            tickets_reset_ = true;
            cudaMemset(tickets_, 0, kMaxKvHeads * sizeof(int));
        }
        ledger_.report();
    }

    // Every kernel launched once on a tiny problem, so that the first real step does not pay for
    // loading the module (CUDA loads kernels lazily, at their first launch) or for the first
    // events; then the times are cleared.
    void warm_up() {
        DeviceBuffer scratch(*this, 64);
        const DeviceSpan a = scratch.at(0, 16), b = scratch.at(16, 16), c = scratch.at(32, 16),
                         d = scratch.at(48, 16);
        const int tokens[2] = {0, 1};
        embed(a, b, tokens, 2, 2);
        rmsnorm(a, b, c, 1, 2, 1e-5f);
        matmul(a, b, c, 1, 2, 2);
        matmul(a, b, c, 2, 2, 2);
        rope(a, b, 2, 0, 2, 2, 2, c);
        kv_append(c, d, a, b, 0, 2, 2);
        attention(a, b, c, d, DeviceSpan{}, 1, 0, 1, 1, 2, true);
        attention(a, b, c, d, DeviceSpan{}, 2, 0, 1, 1, 2, true);
        swiglu(a, b, 2);
        layernorm(a, b, c, d, 1, 2, 1e-5f);
        gelu(a, 2);
        add(a, b, 2);
        // The fused decode kernels, on a model of dim 2, one head of size 2, at position 0.
        const FusedMatrix m{b, GgmlType{}, nullptr};
        NormQkv q;
        q.x = a, q.norm = b, q.wq = m, q.wk = m, q.wv = m, q.inv_freq = b, q.q = a;
        q.cache_k = c, q.cache_v = d, q.dim = 2, q.kv_dim = 2, q.head_dim = 2, q.eps = 1e-5f;
        norm_qkv(q);
        Attend t;
        t.out = a, t.q = b, t.cache_k = c, t.cache_v = d, t.n_heads = 1, t.n_kv_heads = 1;
        t.head_dim = 2;
        attention(t);
        matvec_add(a, b, m, 2, 2);
        norm_gate_up(a, b, c, m, m, 2, 2, 1e-5f);
        norm_logits(a, b, c, m, 2, 2, 1e-5f);
        synchronize();
        times_ = {};
        launched_ = 0;
    }

    // Queues `work` (`kernels` launches) between two events; a refused launch surfaces here,
    // named by its op. With KVSCOPE_CUDA_SYNC=1 the stream is waited for after each op, so a
    // fault names it too. While every op is timed, the first op after a wait holds the stream
    // behind the gate (hold_stream), unless `may_hold` is false (a call that may wait itself).
    template <class F>
    void timed(Op op, F&& work, int kernels = 1, bool may_hold = true) {
        if (capturing_) {  // recorded into the graph: no events, no waiting
            work();
            check(cudaGetLastError(), op_name(op));
            capture_kernels_ += kernels;
            return;
        }
        if (op != Op::Transfer && may_hold) hold_stream();
        Pending p{op, event(), event()};
        check(cudaEventRecord(p.start, stream_), "cudaEventRecord");
        work();
        check(cudaGetLastError(), op_name(op));
        launched_ += kernels;
        check(cudaEventRecord(p.stop, stream_), "cudaEventRecord");
        pending_.push_back(p);
        if (gated_ops_ > 0 && ++gated_ops_ > kGatedOps) open_gate();
        ++queued_;
        ledger_.queued(op_name(op));
        if (ledger_.sync_each_op()) wait();
    }

    // Adds the elapsed time of every finished event pair to times_ (the stream has been synced).
    // A pair that cannot be read (after a fault) is dropped: the fault is what gets reported.
    void resolve() {
        for (const Pending& p : pending_) {
            float ms = 0;
            if (cudaEventElapsedTime(&ms, p.start, p.stop) != cudaSuccess) ms = 0;
            const auto i = static_cast<int>(p.op);
            times_.seconds[i] += ms * 1e-3;
            times_.calls[i] += 1;
            note_call(p.op, ms * 1e-3);
            pool_.push_back(p.start);
            pool_.push_back(p.stop);
        }
        pending_.clear();
    }

    // The gate: while every op is timed, the first op queued after a wait is preceded by a gate
    // kernel that holds the stream until open_gate() (any wait, any call that may block on the
    // device, or kGatedOps ops later, before the launch queue could fill).
    void hold_stream() {
        if (!gate_host_ || !record_calls_ || gated_ops_ > 0) return;
        ++gate_ticket_;
        gate_kernel<<<1, 1, 0, stream_>>>(gate_dev_, gate_ticket_);
        check(cudaGetLastError(), "the op-timing gate");
        ++queued_;
        gated_ops_ = 1;
    }
    void open_gate() noexcept {
        if (gated_ops_ == 0) return;
        *static_cast<volatile int*>(gate_host_) = gate_ticket_;
        gated_ops_ = 0;
    }
    // Token ids (or a block table) on the device: copied into page-locked memory first (a copy from
    // pageable memory may wait for the stream, which the gate may be holding), each call of a pass
    // into its own part of the staging buffers (the copies run only when the stream gets to them);
    // the parts are reused after the next wait. Grown as needed, after a wait.
    const int* ints_to_device(const int* tokens, int T) {
        if (tokens_used_ + std::size_t(T) > tokens_cap_) {
            wait();
            if (tokens_) check(cudaFree(tokens_), "cudaFree");
            if (tokens_host_) check(cudaFreeHost(tokens_host_), "cudaFreeHost");
            tokens_ = tokens_host_ = nullptr;
            tokens_cap_ = std::max<std::size_t>(2 * tokens_cap_, std::size_t(T) + 64);
            check(cudaMalloc(&tokens_, tokens_cap_ * sizeof(int)), "cudaMalloc");
            check(cudaMallocHost(&tokens_host_, tokens_cap_ * sizeof(int)), "cudaMallocHost");
        }
        int* host = tokens_host_ + tokens_used_;
        int* dev = tokens_ + tokens_used_;
        tokens_used_ += std::size_t(T);
        std::copy(tokens, tokens + T, host);
        check(cudaMemcpyAsync(dev, host, T * sizeof(int), cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync (token ids or a block table)");
        return dev;
    }
    // Decode attention's partial results, `need` floats for the whole cache: grown only when the
    // cache is.
    // The planned attention's kernels (prefill, or decode split and combine), its scratch first;
    // a paged one's block table copied to the device inside the op's time.
    void launch_attention(kern::AttentionPlan& p, const BlockTable* table) {
        if (!p.prefill) p.args.partial = ensure_partial(p.partial_floats);
        timed(
            Op::Attention,
            [&] {
                if (table) p.args.block_table = ints_to_device(table->blocks, table->size);
                if (p.prefill)
                    return kern::launch_attention_prefill(p.prefill_shape, stream_, p.args);
                kern::launch_attention_decode_split(p.split, stream_, p.args);
                kern::launch_attention_decode_combine(p.combine, stream_, p.args);
            },
            p.kernels());
    }
    float* ensure_partial(std::size_t need) {
        if (need <= decode_partial_cap_) return decode_partial_;
        // cudaFree waits for the device, which a stream being captured may not: the old buffer
        // is then kept until the backend goes.
        open_gate();
        if (decode_partial_ && capturing_)
            retired_.push_back(decode_partial_);
        else if (decode_partial_)
            check(cudaFree(decode_partial_), "cudaFree");
        decode_partial_ = nullptr;
        check(cudaMalloc(&decode_partial_, need * sizeof(float)), "cudaMalloc");
        decode_partial_cap_ = need;
        ++partial_epoch_;  // a graph recorded before points at the old buffer
        capture_epoch_ = partial_epoch_;
        return decode_partial_;
    }
    // One matmul: a single row by the matrix-vector kernel; more through cuBLAS in float32 (a
    // compact matrix widened first into a float32 scratch copy), or the tiled kernel without it.
    void matmul_any(DeviceSpan out, DeviceSpan x, const kern::MatrixRef& w, int T, int n, int d) {
        const kern::MatmulArgs a{out.data, x.data, w, T, n, d};
        if (kern::matmul_uses_matvec(T)) {
            timed(Op::Matmul, [&] {
                kern::launch_matvec(kern::matvec_shape(d, blocks_.matvec_rows), stream_, a);
            });
            return;
        }
        if (capturing_ || !cublas_.ready()) {
            timed(Op::Matmul,
                  [&] { kern::launch_matmul_tiled(kern::matmul_tiled_shape(T, d), stream_, a); });
            return;
        }
        const float* wf = static_cast<const float*>(w.data);
        const std::size_t count = std::size_t(d) * n;
        if (w.kind != kern::kWeightF32) {
            if (count > widened_cap_) {
                open_gate();
                if (widened_) check(cudaFree(widened_), "cudaFree");
                widened_ = nullptr;
                check(cudaMalloc(&widened_, count * sizeof(float)), "cudaMalloc");
                widened_cap_ = count;
            }
            kern::launch_widen(kern::elementwise_shape(count), stream_, {widened_, w, count});
            check(cudaGetLastError(), "widen (compact weights for cuBLAS)");
            launched_ += 1;
            wf = widened_;
        }
        // cuBLAS's first call of a shape may load its kernels and allocate a workspace, either of
        // which may wait for the device: not behind the gate.
        open_gate();
        std::string why;
        timed(
            Op::Matmul, [&] { why = cublas_.gemm(stream_, out.data, x.data, wf, T, n, d, gemm_); },
            1, false);
        if (!why.empty()) throw Error("CUDA error in matmul: " + why);
    }

    std::string device_;
    FaultLedger ledger_;
    int queued_ = 0;  // operations queued since the last stream sync
    cudaStream_t stream_ = nullptr;
    std::vector<cudaEvent_t> pool_;
    std::vector<Pending> pending_;
    int* tokens_ = nullptr;       // device copies of token ids and block tables (ints_to_device)
    int* tokens_host_ = nullptr;  // their page-locked staging
    std::size_t tokens_cap_ = 0, tokens_used_ = 0;
    float* decode_partial_ = nullptr;  // decode attention's partial results (attention.cuh)
    std::size_t decode_partial_cap_ = 0;

    // Graphs: the step's [token ids | positions] (kMaxSequences each) on the device and its
    // page-locked host copy; the recorded passes, each with the partial buffer's epoch it saw.
    struct Graph {
        cudaGraphExec_t exec;
        int epoch;
        int kernels;  // kernels in the recording
    };
    const int* step_position() const {
        return capturing_ ? step_dev_ + kMaxSequences + capture_seq_ : nullptr;
    }
    bool graphs_on_ = true;
    int* step_dev_ = nullptr;
    int* step_host_ = nullptr;
    bool capturing_ = false;
    int capture_seq_ = 0;
    int capture_epoch_ = 0;
    int partial_epoch_ = 0;
    std::map<int, Graph> graphs_;
    int next_graph_ = 1;
    std::vector<float*> retired_;  // partial buffers outgrown while capturing
    kern::BlockSizes blocks_;      // kern::block_variants, for kvscope-cli kernels
    int capture_keys_ = 0;         // position_of's max_keys
    int capture_kernels_ = 0;      // kernels recorded since begin_capture
    std::uint64_t launched_ = 0;   // kernels launched, each kernel of a graph replay counted

    // Fused decode kernels: launched with programmatic dependent launch (sm_90 and later), the
    // attention kernel's tickets ([n_kv_heads], zero between launches).
    static constexpr int kMaxKvHeads = 1024;
    bool fused_on_ = true;
    bool dependent_launch_ = false;
    int* tickets_ = nullptr;
    bool tickets_reset_ = false;  // zeroed after the fault the ledger keeps
    std::map<const unsigned char*, std::size_t> compact_;  // adopt_compact's copies

    // The op-timing gate (hold_stream): its flag in mapped host memory (null: no gate).
    static constexpr int kGatedOps = 128;
    int* gate_host_ = nullptr;
    int* gate_dev_ = nullptr;
    int gate_ticket_ = 0;
    int gated_ops_ = 0;  // ops queued behind the gate; 0: the stream is not held

    // cuBLAS for T > 1; a compact matrix widened to float32 for it.
    CublasGemm cublas_;
    std::string cublas_note_;
    GemmPrecision gemm_ = GemmPrecision::F32;
    float* widened_ = nullptr;
    std::size_t widened_cap_ = 0;
};

}  // namespace

// What `--backend auto` checks before choosing the GPU, in order: a device answers, it can be
// made current (a prohibited or busy device fails here), this build has a kernel image for its
// architecture, and a stream runs a kernel to the end. Each failure clears CUDA's last error and
// comes back as the reason to fall back to the CPU.
std::string cuda_device_problem() {
    auto why = [](const char* step, cudaError_t e) {
        cudaGetLastError();  // clear it, so later calls do not report it again
        return std::string(step) + ": " + cudaGetErrorString(e);
    };
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cudaGetErrorString(e);
    }
    if (n == 0) return "no CUDA device found";
    if ((e = cudaSetDevice(0)) != cudaSuccess) return why("cudaSetDevice", e);
    cudaDeviceProp p{};
    if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess)
        return why("cudaGetDeviceProperties", e);
    if ((e = static_cast<cudaError_t>(kern::kernel_image_status())) != cudaSuccess) {
        cudaGetLastError();
        return no_kernel_image_reason(p.name, p.major, p.minor, KVSCOPE_CUDA_ARCHS) + " (" +
               cudaGetErrorString(e) + ")";
    }
    cudaStream_t st = nullptr;
    if ((e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)) != cudaSuccess)
        return why("cudaStreamCreate", e);
    float* one = nullptr;
    if ((e = cudaMalloc(&one, sizeof(float))) == cudaSuccess) {
        // x += x on one zeroed element: a launch that must run to its end.
        cudaMemsetAsync(one, 0, sizeof(float), st);
        kern::launch_add(kern::elementwise_shape(1), st, {one, one, 1});
        e = cudaGetLastError();
        const cudaError_t done = cudaStreamSynchronize(st);
        if (e == cudaSuccess) e = done;
        cudaFree(one);
    }
    cudaStreamDestroy(st);
    return e == cudaSuccess ? std::string() : why("a probe kernel on a stream", e);
}

std::unique_ptr<Backend> make_cuda_backend() {
    return std::make_unique<CudaBackend>();
}

bool set_cuda_gemm(Backend& be, GemmPrecision p) {
    auto* cuda = dynamic_cast<CudaBackend*>(&be);
    if (cuda) cuda->set_gemm(p);
    return cuda != nullptr;
}

std::string cuda_gemm_note(Backend& be) {
    auto* cuda = dynamic_cast<CudaBackend*>(&be);
    return cuda ? cuda->gemm_note() : std::string();
}

bool set_cuda_block_sizes(Backend& be, const kern::BlockSizes& b) {
    auto* cuda = dynamic_cast<CudaBackend*>(&be);
    if (cuda) cuda->set_block_sizes(b);
    return cuda != nullptr;
}

}  // namespace kvs
