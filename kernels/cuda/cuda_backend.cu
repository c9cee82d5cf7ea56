// The "cuda" backend: weights and KV cache in device memory, every op one kernel launch on one
// stream, host transfers only where the caller asks (download). Each launch is bracketed by two
// CUDA events; their elapsed times are read in synchronize()/op_times(), once the stream has
// passed them, so timing never stalls the queue between kernels.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/cuda/cuda_entry.h"
#include "kernels/cuda/kernel_launchers.h"

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
        device_ = std::string(p.name) + " (sm_" + std::to_string(p.major) +
                  std::to_string(p.minor) + ", device 0, CUDA events)";
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    }
    ~CudaBackend() override {
        cudaStreamSynchronize(stream_);
        for (const Pending& p : pending_) {
            cudaEventDestroy(p.start);
            cudaEventDestroy(p.stop);
        }
        for (cudaEvent_t e : pool_) cudaEventDestroy(e);
        if (tokens_) cudaFree(tokens_);
        cudaStreamDestroy(stream_);
    }
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    std::string name() const override { return "cuda"; }
    std::string device() const override { return device_; }

    DeviceSpan alloc(std::size_t n) override {
        void* p = nullptr;
        check(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc");
        check(cudaMemsetAsync(p, 0, n * sizeof(float), stream_), "cudaMemsetAsync");
        return {static_cast<float*>(p), n};
    }
    void release(DeviceSpan s) override {
        // cudaFree waits for the device, so no queued kernel still uses s.
        check(cudaFree(s.data), "cudaFree");
    }
    void upload(DeviceSpan dst, const float* src, std::size_t n) override {
        timed(Op::Transfer, [&] {
            check(
                cudaMemcpyAsync(dst.data, src, n * sizeof(float), cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync (upload)");
        });
        // src is pageable host memory the caller may free: wait until it has been read.
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    }
    void download(float* dst, DeviceSpan src, std::size_t n) override {
        timed(Op::Transfer, [&] {
            check(
                cudaMemcpyAsync(dst, src.data, n * sizeof(float), cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync (download)");
        });
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
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
        const kern::AttentionArgs a{
            out.data, q.data, cache_k.data, cache_v.data, probs.empty() ? nullptr : probs.data,
            T,        pos0,   n_heads,      n_kv_heads,   head_dim};
        // Shapes first: one that does not fit throws before anything is queued.
        const bool decode = kern::attention_uses_decode(T);
        const kern::LaunchShape s = decode ? kern::attention_decode_shape(pos0, n_heads, n_kv_heads)
                                           : kern::attention_prefill_shape(T, pos0, n_heads);
        timed(Op::Attention, [&] {
            if (decode)
                kern::launch_attention_decode(s, stream_, a);
            else
                kern::launch_attention_prefill(s, stream_, a);
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
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
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

    // Queues `work` between two events; a failed launch surfaces here, named by its op.
    template <class F>
    void timed(Op op, F&& work) {
        Pending p{op, event(), event()};
        check(cudaEventRecord(p.start, stream_), "cudaEventRecord");
        work();
        check(cudaGetLastError(), op_name(op));
        check(cudaEventRecord(p.stop, stream_), "cudaEventRecord");
        pending_.push_back(p);
    }

    // Adds the elapsed time of every finished event pair to times_ (the stream has been synced).
    void resolve() {
        for (const Pending& p : pending_) {
            float ms = 0;
            check(cudaEventElapsedTime(&ms, p.start, p.stop), "cudaEventElapsedTime");
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
    cudaStream_t stream_ = nullptr;
    std::vector<cudaEvent_t> pool_;
    std::vector<Pending> pending_;
    int* tokens_ = nullptr;  // device copy of embed's token ids
    std::size_t tokens_cap_ = 0;
};

}  // namespace

std::string cuda_device_problem() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();  // clear it, so later calls do not report it again
        return cudaGetErrorString(e);
    }
    return n > 0 ? std::string() : std::string("no CUDA device found");
}

std::unique_ptr<Backend> make_cuda_backend() {
    return std::make_unique<CudaBackend>();
}

}  // namespace kvs
