// The "cuda" backend: weights and KV cache in device memory, every op one kernel launch on one
// stream, host transfers only where the caller asks (download). Each launch is bracketed by two
// CUDA events; their elapsed times are read in synchronize()/op_times(), once the stream has
// passed them, so timing never stalls the queue between kernels. Errors:
// kernels/cuda/fault_ledger.h (release never throws; a fault is reported once, named, by the next
// sync).
//
// CUDA Graphs (core/model/step_graphs.h): a decode pass recorded once by stream capture and
// replayed by one cudaGraphLaunch per token. While capturing, ops are launched without events
// (nothing is timed, nothing waits) and read the step's token ids and positions from step_dev_,
// which set_step() fills before each replay.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/model/step_graphs.h"
#include "core/util/error.h"
#include "kernels/cuda/cuda_entry.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/fault_ledger.h"
#include "kernels/cuda/kernel_launchers.h"

#ifndef KVSCOPE_CUDA_ARCHS
#define KVSCOPE_CUDA_ARCHS "the architectures it was configured with"
#endif

namespace kvs {
namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

class CudaBackend final : public Backend, public StepGraphs {
  public:
    CudaBackend() {
        if (const char* g = std::getenv("KVSCOPE_CUDA_GRAPHS"); g && std::string(g) == "0")
            graphs_on_ = false;
        check(cudaSetDevice(0), "cudaSetDevice");
        cudaDeviceProp p{};
        check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        device_ = describe_cuda_device(p.name, p.major, p.minor, driver, runtime);
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaMalloc(&step_dev_, 2 * kMaxSequences * sizeof(int)), "cudaMalloc");
        check(cudaMallocHost(&step_host_, 2 * kMaxSequences * sizeof(int)), "cudaMallocHost");
        warm_up();
    }
    ~CudaBackend() override {
        cudaStreamSynchronize(stream_);
        for (const Pending& p : pending_) {
            cudaEventDestroy(p.start);
            cudaEventDestroy(p.stop);
        }
        for (cudaEvent_t e : pool_) cudaEventDestroy(e);
        if (tokens_) cudaFree(tokens_);
        if (decode_partial_) cudaFree(decode_partial_);
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
    std::uint64_t device_free_bytes() const override {
        std::size_t free = 0, total = 0;  // device 0, current since the constructor
        return cudaMemGetInfo(&free, &total) == cudaSuccess ? free : 0;
    }

    DeviceSpan alloc(std::size_t n) override {
        void* p = nullptr;
        check(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc");
        check(cudaMemsetAsync(p, 0, n * sizeof(float), stream_), "cudaMemsetAsync");
        ++queued_;
        return {static_cast<float*>(p), n};
    }
    void release(DeviceSpan s) noexcept override {
        // cudaFree waits for the device, so no queued kernel still uses s. After a device fault
        // it returns that fault again: kept for the next synchronize(), never thrown from here.
        const cudaError_t e = cudaFree(s.data);
        if (e != cudaSuccess) ledger_.keep_call("cudaFree", cudaGetErrorString(e));
    }
    float* alloc_host(std::size_t n) override {
        void* p = nullptr;
        check(cudaMallocHost(&p, n * sizeof(float)), "cudaMallocHost");
        return static_cast<float*>(p);
    }
    void release_host(float* p) noexcept override {
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
    void upload(DeviceSpan dst, const float* src, std::size_t n) override {
        timed(Op::Transfer, [&] {
            check(
                cudaMemcpyAsync(dst.data, src, n * sizeof(float), cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync (upload)");
        });
        // src is pageable host memory the caller may free: wait until it has been read.
        wait();
    }
    void download(float* dst, DeviceSpan src, std::size_t n) override {
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
            if (std::size_t(T) > tokens_cap_) {
                if (tokens_) check(cudaFree(tokens_), "cudaFree");
                tokens_ = nullptr;
                check(cudaMalloc(&tokens_, T * sizeof(int)), "cudaMalloc");
                tokens_cap_ = T;
            }
            check(
                cudaMemcpyAsync(tokens_, tokens, T * sizeof(int), cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync (tokens)");
            kern::launch_embed(kern::embed_shape(T, dim), stream_,
                               {x.data, table.data, tokens_, T, dim});
        });
    }
    void rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim, float eps) override {
        timed(Op::RmsNorm, [&] {
            kern::launch_rmsnorm(kern::rmsnorm_shape(T, blocks_.rmsnorm), stream_,
                                 {out.data, x.data, w.data, T, dim, eps});
        });
    }
    void matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) override {
        const kern::MatmulArgs a{out.data, x.data, w.data, T, n, d};
        timed(Op::Matmul, [&] {
            if (kern::matmul_uses_matvec(T))
                kern::launch_matvec(kern::matvec_shape(d, blocks_.matvec_rows), stream_, a);
            else
                kern::launch_matmul_tiled(kern::matmul_tiled_shape(T, d), stream_, a);
        });
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
    void attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                   DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads, int head_dim,
                   bool causal) override {
        kern::AttentionArgs a{
            out.data, q.data, cache_k.data, cache_v.data, probs.empty() ? nullptr : probs.data,
            T,        pos0,   n_heads,      n_kv_heads,   head_dim,
            nullptr};
        a.causal = causal ? 1 : 0;
        // Shapes first: one that does not fit throws before anything is queued.
        if (!kern::attention_uses_decode(T)) {
            if (capturing_) throw Error("a prefill pass cannot be recorded into a decode graph");
            const kern::LaunchShape s =
                kern::attention_prefill_shape(T, pos0, n_heads, blocks_.attention);
            timed(Op::Attention, [&] { kern::launch_attention_prefill(s, stream_, a); });
            return;
        }
        // Recorded: the position from the step, probs rows a capacity apart, and a split grid
        // for the whole cache (kern::AttentionArgs::pos_at).
        const int capacity = static_cast<int>(cache_k.size / (std::size_t(n_kv_heads) * head_dim));
        if (capturing_) {
            a.pos_at = step_position();
            a.probs_stride = capacity;
        }
        const kern::LaunchShape split = kern::attention_decode_split_shape(
            capturing_ ? capacity - 1 : pos0, n_heads, n_kv_heads, head_dim);
        const kern::LaunchShape combine =
            kern::attention_decode_combine_shape(n_heads, blocks_.attention);
        // Partial results sized for the whole cache: grown only when the cache is.
        const std::size_t need =
            kern::decode_partial_floats_for_cache(cache_k.size, n_heads, n_kv_heads, head_dim);
        if (need > decode_partial_cap_) {
            // cudaFree waits for the device, which a stream being captured may not: the old
            // buffer is then kept until the backend goes.
            if (decode_partial_ && capturing_)
                retired_.push_back(decode_partial_);
            else if (decode_partial_)
                check(cudaFree(decode_partial_), "cudaFree");
            decode_partial_ = nullptr;
            check(cudaMalloc(&decode_partial_, need * sizeof(float)), "cudaMalloc");
            decode_partial_cap_ = need;
            ++partial_epoch_;  // a graph recorded before points at the old buffer
            capture_epoch_ = partial_epoch_;
        }
        a.partial = decode_partial_;
        timed(Op::Attention, [&] {
            kern::launch_attention_decode_split(split, stream_, a);
            kern::launch_attention_decode_combine(combine, stream_, a);
        });
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

    StepGraphs* graphs() override { return this; }
    bool graphs_on() const override { return graphs_on_; }
    void set_graphs_on(bool on) override { graphs_on_ = on; }
    void set_step(const int* tokens, const int* positions, int n) override {
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
        // Relaxed: decode attention's first cudaMalloc may happen while recording.
        check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed),
              "cudaStreamBeginCapture");
        capturing_ = true;
        capture_seq_ = 0;
        capture_epoch_ = partial_epoch_;
    }
    void position_of(int seq) override {
        if (seq < 0 || seq >= kMaxSequences)
            throw Error("no graph step sequence " + std::to_string(seq));
        capture_seq_ = seq;
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
        graphs_[id] = {exec, capture_epoch_};
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
        if (queued_ > 0) {
            queued_ = 0;
            const cudaError_t e = cudaStreamSynchronize(stream_);
            if (e != cudaSuccess) ledger_.keep_sync(cudaGetErrorString(e));
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
        synchronize();
        times_ = {};
    }

    // Queues `work` between two events; a refused launch surfaces here, named by its op. With
    // KVSCOPE_CUDA_SYNC=1 the stream is waited for after each op, so a fault names it too.
    template <class F>
    void timed(Op op, F&& work) {
        if (capturing_) {  // recorded into the graph: no events, no waiting
            work();
            check(cudaGetLastError(), op_name(op));
            return;
        }
        Pending p{op, event(), event()};
        check(cudaEventRecord(p.start, stream_), "cudaEventRecord");
        work();
        check(cudaGetLastError(), op_name(op));
        check(cudaEventRecord(p.stop, stream_), "cudaEventRecord");
        pending_.push_back(p);
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

    std::string device_;
    FaultLedger ledger_;
    int queued_ = 0;  // operations queued since the last stream sync
    cudaStream_t stream_ = nullptr;
    std::vector<cudaEvent_t> pool_;
    std::vector<Pending> pending_;
    int* tokens_ = nullptr;  // device copy of embed's token ids
    std::size_t tokens_cap_ = 0;
    float* decode_partial_ = nullptr;  // decode attention's partial results (attention.cuh)
    std::size_t decode_partial_cap_ = 0;

    // Graphs: the step's [token ids | positions] (kMaxSequences each) on the device and its
    // page-locked host copy; the recorded passes, each with the partial buffer's epoch it saw.
    struct Graph {
        cudaGraphExec_t exec;
        int epoch;
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

bool set_cuda_block_sizes(Backend& be, const kern::BlockSizes& b) {
    auto* cuda = dynamic_cast<CudaBackend*>(&be);
    if (cuda) cuda->set_block_sizes(b);
    return cuda != nullptr;
}

}  // namespace kvs
