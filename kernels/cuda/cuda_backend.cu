// The "cuda" backend: weights and KV cache in device memory, every op one kernel launch on one
// stream, host transfers only where the caller asks (download). Each launch is bracketed by two
// CUDA events; their elapsed times are read in synchronize()/op_times(), once the stream has
// passed them, so timing never stalls the queue between kernels. Errors:
// kernels/cuda/fault_ledger.h (release never throws; a fault is reported once, named, by the next
// sync).
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "core/error.h"
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

class CudaBackend final : public Backend {
  public:
    CudaBackend() {
        check(cudaSetDevice(0), "cudaSetDevice");
        cudaDeviceProp p{};
        check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        device_ = describe_cuda_device(p.name, p.major, p.minor, driver, runtime);
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
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
    void rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim) override {
        timed(Op::RmsNorm, [&] {
            kern::launch_rmsnorm(kern::rmsnorm_shape(T), stream_,
                                 {out.data, x.data, w.data, T, dim});
        });
    }
    void matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) override {
        const kern::MatmulArgs a{out.data, x.data, w.data, T, n, d};
        timed(Op::Matmul, [&] {
            if (kern::matmul_uses_matvec(T))
                kern::launch_matvec(kern::matvec_shape(d), stream_, a);
            else
                kern::launch_matmul_tiled(kern::matmul_tiled_shape(T, d), stream_, a);
        });
    }
    void rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim,
              int head_dim) override {
        timed(Op::Rope, [&] {
            kern::launch_rope(kern::rope_shape(T, dim), stream_,
                              {q.data, k.data, T, pos0, dim, kv_dim, head_dim});
        });
    }
    void kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v, int pos0,
                   int T, int kv_dim) override {
        timed(Op::KvAppend, [&] {
            kern::launch_kv_append(kern::kv_append_shape(T, kv_dim), stream_,
                                   {cache_k.data, cache_v.data, k.data, v.data, pos0, T, kv_dim});
        });
    }
    void attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                   DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                   int head_dim) override {
        kern::AttentionArgs a{
            out.data, q.data, cache_k.data, cache_v.data, probs.empty() ? nullptr : probs.data,
            T,        pos0,   n_heads,      n_kv_heads,   head_dim,
            nullptr};
        // Shapes first: one that does not fit throws before anything is queued.
        if (!kern::attention_uses_decode(T)) {
            const kern::LaunchShape s = kern::attention_prefill_shape(T, pos0, n_heads);
            timed(Op::Attention, [&] { kern::launch_attention_prefill(s, stream_, a); });
            return;
        }
        const kern::LaunchShape split =
            kern::attention_decode_split_shape(pos0, n_heads, n_kv_heads, head_dim);
        const kern::LaunchShape combine = kern::attention_decode_combine_shape(n_heads);
        // Partial results sized for the whole cache: grown only when the cache is.
        const std::size_t need =
            kern::decode_partial_floats_for_cache(cache_k.size, n_heads, n_kv_heads, head_dim);
        if (need > decode_partial_cap_) {
            if (decode_partial_) check(cudaFree(decode_partial_), "cudaFree");
            decode_partial_ = nullptr;
            check(cudaMalloc(&decode_partial_, need * sizeof(float)), "cudaMalloc");
            decode_partial_cap_ = need;
        }
        a.partial = decode_partial_;
        timed(Op::Attention, [&] {
            kern::launch_attention_decode_split(split, stream_, a);
            kern::launch_attention_decode_combine(combine, stream_, a);
        });
    }
    void swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) override {
        timed(Op::SwiGLU, [&] {
            kern::launch_swiglu(kern::elementwise_shape(n), stream_, {h1.data, h3.data, n});
        });
    }
    void add(DeviceSpan x, DeviceSpan y, std::size_t n) override {
        timed(Op::Add, [&] {
            kern::launch_add(kern::elementwise_shape(n), stream_, {x.data, y.data, n});
        });
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
        rmsnorm(a, b, c, 1, 2);
        matmul(a, b, c, 1, 2, 2);
        matmul(a, b, c, 2, 2, 2);
        rope(a, b, 2, 0, 2, 2, 2);
        kv_append(c, d, a, b, 0, 2, 2);
        attention(a, b, c, d, DeviceSpan{}, 1, 0, 1, 1, 2);
        attention(a, b, c, d, DeviceSpan{}, 2, 0, 1, 1, 2);
        swiglu(a, b, 2);
        add(a, b, 2);
        synchronize();
        times_ = {};
    }

    // Queues `work` between two events; a refused launch surfaces here, named by its op. With
    // KVSCOPE_CUDA_SYNC=1 the stream is waited for after each op, so a fault names it too.
    template <class F>
    void timed(Op op, F&& work) {
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

}  // namespace kvs
