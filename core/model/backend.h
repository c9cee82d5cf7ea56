#pragma once
// The ops the Llama forward pass is written in. A Backend owns its memory: a DeviceSpan may be a
// GPU address, so core code passes spans around and offsets them but never dereferences them.
// All tensors are float32, row-major; shapes are given per op.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvs {

enum class GgmlType : std::uint32_t;  // core/files/gguf_file.h: a weight storage type

struct DeviceSpan {
    float* data = nullptr;
    std::size_t size = 0;
    DeviceSpan at(std::size_t offset, std::size_t n) const { return {data + offset, n}; }
    bool empty() const { return size == 0; }
};

// Op families, for per-op timing. Order matters only for display.
enum class Op {
    Embed,
    RmsNorm,
    Matmul,
    Rope,
    KvAppend,
    Attention,
    SwiGLU,
    Add,
    LayerNorm,  // GPT-2's
    Gelu,       // GPT-2's
    Fused,      // one kernel of the fused decode step (core/model/fused_ops.h), several ops in it
    Transfer,
    kCount
};
constexpr int kOpCount = static_cast<int>(Op::kCount);
const char* op_name(Op op);

// One timed op call (transfers excluded), for the op strip.
struct OpCall {
    Op op = Op::Embed;
    double seconds = 0;
};

struct OpTimes {
    std::array<double, kOpCount> seconds{};
    std::array<int, kOpCount> calls{};
    double total() const;
};

// How a backend times an op: the host's clock around the call (the CPU), the emulator's wall
// time, CUDA events around each launch (on a GPU they include the host's issue time when launches
// are slower than the kernels), or CUDA events between kernels queued behind a held stream (the
// device's time).
enum class OpTiming { HostClock, Emulator, EventsAroundLaunches, EventsHeldStream };

// A sequence's block table in a paged KV cache (core/model/kv_blocks.h): `blocks` [size] names
// the pool's block for each of its logical blocks (host memory; a backend takes it to its own),
// so position p is pool row blocks[p / block_size] * block_size + p % block_size.
struct BlockTable {
    const int* blocks = nullptr;
    int size = 0;
    int block_size = 0;
    std::size_t row(int p) const {
        return std::size_t(blocks[p / block_size]) * block_size + p % block_size;
    }
    // Throws kvs::Error unless there is a table and a block size: every backend's paged op calls
    // it before it reads or copies the table.
    void check() const;
};

// The keys of a paged attention (Backend::attention_paged): key s is at position s below
// `sinks` and s + skip from there (StreamingLLM's window: its rows past the sinks), in the rows
// `table` gives it. sink_k, when not empty: the sinks' K rows [sinks, kv_dim] (moved by RoPE) in
// place of the pool's.
struct PagedKeys {
    BlockTable table;
    int sinks = 0, skip = 0;
    DeviceSpan sink_k;
    int position(int s) const { return s < sinks ? s : s + skip; }
    void check() const;  // the table's check, and sinks and skip not negative
    std::size_t row(int s) const { return table.row(position(s)); }
};

class StepGraphs;  // core/model/step_graphs.h
class FusedOps;    // core/model/fused_ops.h

class Backend {
  public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;    // "cpu", "cuda", "cuda-emulated"
    virtual std::string device() const = 0;  // what measured the times, in words
    // Free bytes of the backend's own memory (a GPU's), read now; 0 for a backend that
    // computes in host memory (core/loaders/memory_budget.h checks a model against it before
    // loading).
    virtual std::uint64_t device_free_bytes() const { return 0; }

    virtual DeviceSpan alloc(std::size_t n) = 0;  // zero-filled
    // Never throws: it runs in destructors, also while another error unwinds. A backend that
    // can fail here keeps the error for its next synchronize().
    virtual void release(DeviceSpan s) noexcept = 0;
    virtual void upload(DeviceSpan dst, const float* src, std::size_t n) = 0;
    virtual void download(float* dst, DeviceSpan src, std::size_t n) = 0;
    // Read-only host floats that outlive every use (a mapped checkpoint's weights): a backend that
    // computes in host memory uses them where they are, with no copy (the CPU); the others copy
    // them into their own memory (the default). Ops never write to a weight span.
    virtual DeviceSpan adopt_host(const float* src, std::size_t n) {
        const DeviceSpan s = alloc(n);
        upload(s, src, n);
        return s;
    }
    virtual void release_adopted(DeviceSpan s) noexcept { release(s); }

    // x[t, :] = table[tokens[t], :]          x: [T, dim], table: [vocab, dim], tokens on the host
    virtual void embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) = 0;
    // out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * w     out, x: [T, dim], w: [dim]
    virtual void rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim, float eps) = 0;
    // GPT-2's LayerNorm: out[t] = (x[t] - mean(x[t])) / sqrt(var(x[t]) + eps) * w + b, with the
    // variance over dim (not dim - 1), as torch.nn.LayerNorm.   out, x: [T, dim], w, b: [dim]
    virtual void layernorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, DeviceSpan b, int T, int dim,
                           float eps) = 0;
    // out[t, i] = sum_j w[i, j] * x[t, j]     x: [T, n], w: [d, n], out: [T, d]
    virtual void matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) = 0;
    // Compact weights (core/model/compact_weights.h): whether matmul_compact and embed_compact read
    // `type`; the matmul with w [d, n] in that type, widened to float32 as it is read (the
    // arithmetic float32); the embedding rows from a table [vocab, dim] in that type, dequantised.
    // w and table are what adopt_compact returned for their bytes: the host bytes themselves on the
    // CPU (used where they lie), a copy in its own memory on a GPU. The CPU reads F16, BF16, Q8_0,
    // Q4_0 and the K-quants; cuda and cuda-emulated F16 and BF16; for the others the runner expands
    // the weights to float32, and the defaults refuse.
    virtual bool runs_compact(GgmlType type) const;
    virtual void matmul_compact(DeviceSpan out, DeviceSpan x, GgmlType type, const unsigned char* w,
                                int T, int n, int d);
    virtual void embed_compact(DeviceSpan x, GgmlType type, const unsigned char* table,
                               const int* tokens, int T, int dim);
    // `bytes` bytes of compact weights that outlive every use, as matmul_compact and
    // embed_compact will read them; release_compact (never throws) gives a copy back.
    virtual const unsigned char* adopt_compact(const unsigned char* host, std::size_t bytes) {
        (void)bytes;
        return host;
    }
    virtual void release_compact(const unsigned char* adopted) noexcept { (void)adopted; }
    // Rotates adjacent pairs (i, i+1) of q and k for positions pos0..pos0+T-1 (run.c's RoPE):
    // pair p of a head by pos * inv_freq[p] (core/model/rope_frequencies.h works the table out).
    // q: [T, dim], k: [T, kv_dim], inv_freq: [head_dim / 2] on the backend
    virtual void rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim,
                      int head_dim, DeviceSpan inv_freq) = 0;
    // cache[pos0 + t, :] = new[t, :] for K and V.   cache: [capacity, kv_dim], new: [T, kv_dim]
    virtual void kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v,
                           int pos0, int T, int kv_dim) = 0;
    // The same through a block table: pool rows of positions pos0..pos0+T-1 = new[t, :], for
    // K and V (vLLM's reshape_and_cache).  pool: [n_blocks * block_size, kv_dim] (one layer of a
    // KvBlockPool), new: [T, kv_dim]. The default copies a run of rows within a block at a time.
    virtual void kv_append_paged(DeviceSpan pool_k, DeviceSpan pool_v, DeviceSpan k, DeviceSpan v,
                                 int pos0, int T, int kv_dim, const BlockTable& table);
    // Attention of T queries at positions pos0.. over cache rows 0..pos0+T-1, GQA mapping
    // query head h -> kv head h / (n_heads / n_kv_heads), scale 1/sqrt(head_dim). causal: query
    // t sees keys 0..pos0+t (a decoder's mask); else every key (an encoder's: BERT, T5).
    // q, out: [T, n_heads * head_dim]; cache: [capacity, n_kv_heads * head_dim].
    // probs, when not empty: [n_heads, T, pos0 + T] softmax weights, masked cells 0.
    virtual void attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                           DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                           int head_dim, bool causal) = 0;
    // The same attention over a paged cache read in place through a sequence's block table
    // (vLLM's PagedAttention): key s (s < pos0 + T, in the order the mask counts them) is at
    // position keys.position(s), whose K and V rows are row keys.row(s) of pool_k and pool_v
    // ([n_blocks * block_size, n_kv_heads * head_dim], one layer of a KvBlockPool), nothing
    // copied together first. Where attends_paged_in_place(); elsewhere the runner gathers the rows
    // into contiguous ones first, and the default here refuses.
    virtual bool attends_paged_in_place() const { return false; }
    virtual void attention_paged(DeviceSpan out, DeviceSpan q, DeviceSpan pool_k, DeviceSpan pool_v,
                                 DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                                 int head_dim, bool causal, const PagedKeys& keys);
    // h1 = silu(h1) * h3                      h1, h3: [n]
    virtual void swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) = 0;
    // GPT-2's GELU, the tanh form ("gelu_new"):                  h: [n]
    // h = 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3)))
    virtual void gelu(DeviceSpan h, std::size_t n) = 0;
    // x += y                                  x, y: [n]
    virtual void add(DeviceSpan x, DeviceSpan y, std::size_t n) = 0;
    // x[t, :] += b (a projection's bias, Qwen2's q/k/v)      x: [T, n], b: [n]
    virtual void add_bias(DeviceSpan x, DeviceSpan b, int T, int n) = 0;

    // A strided device-to-device copy, used to gather a step's captures into one place so that
    // they come back in one download:  dst[r * dst_stride + j] = src[r * src_stride + j]
    // for r < rows, j < row_len (strides and lengths in floats).
    virtual void copy_rows(DeviceSpan dst, std::size_t dst_stride, DeviceSpan src,
                           std::size_t src_stride, std::size_t rows, std::size_t row_len) = 0;
    // Host memory that download() fills fastest (page-locked on a GPU, so the copy is one DMA
    // transfer); release_host never throws.
    virtual float* alloc_host(std::size_t n) { return new float[n](); }
    virtual void release_host(float* p) noexcept { delete[] p; }

    // CUDA Graphs of decode steps (core/model/step_graphs.h), or null where the backend has none.
    virtual StepGraphs* graphs() { return nullptr; }
    // Fused decode kernels (core/model/fused_ops.h), or null where the backend has none.
    virtual FusedOps* fused() { return nullptr; }
    // Kernels this backend has launched so far, each kernel of a replayed graph counted (0 for a
    // backend without kernels): the difference over a step is its kernel launches.
    virtual std::uint64_t kernel_launches() const { return 0; }
    // How the per-op times are measured (the op strip says it).
    virtual OpTiming op_timing() const { return OpTiming::HostClock; }

    // Wait for queued work; after it, op_times() is complete.
    virtual void synchronize() {}
    virtual void reset_op_times() {
        times_ = {};
        calls_.clear();
    }
    virtual OpTimes op_times() { return times_; }
    // Each op call's own time, in issue order, while recording is on (set_record_calls), since
    // reset_op_times(); transfers left out. Complete after synchronize(). A backend that cannot
    // time calls one by one leaves it empty.
    void set_record_calls(bool on) { record_calls_ = on; }
    virtual std::vector<OpCall> op_calls() { return calls_; }

  protected:
    void note_call(Op op, double seconds) {
        if (record_calls_ && op != Op::Transfer) calls_.push_back({op, seconds});
    }
    OpTimes times_;
    bool record_calls_ = false;
    std::vector<OpCall> calls_;
};

// A backend allocation that frees itself.
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    DeviceBuffer(Backend& b, std::size_t n) : backend_(&b), span_(b.alloc(n)) {}
    // Backend::adopt_host(src, n), given back through release_adopted.
    static DeviceBuffer adopt(Backend& b, const float* src, std::size_t n) {
        DeviceBuffer d;
        d.backend_ = &b;
        d.span_ = b.adopt_host(src, n);
        d.adopted_ = true;
        return d;
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : backend_(o.backend_), span_(o.span_), adopted_(o.adopted_) {
        o.span_ = {};
    }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            backend_ = o.backend_;
            span_ = o.span_;
            adopted_ = o.adopted_;
            o.span_ = {};
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { reset(); }
    void reset() {
        if (backend_ && span_.data) {
            if (adopted_)
                backend_->release_adopted(span_);
            else
                backend_->release(span_);
        }
        span_ = {};
        adopted_ = false;
    }
    DeviceSpan span() const { return span_; }
    DeviceSpan at(std::size_t offset, std::size_t n) const { return span_.at(offset, n); }
    std::size_t size() const { return span_.size; }

  private:
    Backend* backend_ = nullptr;
    DeviceSpan span_;
    bool adopted_ = false;
};

// Host memory from a backend's alloc_host, freed by itself; grows, never shrinks.
class HostBuffer {
  public:
    HostBuffer() = default;
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    ~HostBuffer() { reset(); }
    void reserve(Backend& b, std::size_t n) {
        if (n <= size_ && backend_ == &b) return;
        reset();
        data_ = b.alloc_host(n);
        backend_ = &b;
        size_ = n;
    }
    void reset() {
        if (backend_ && data_) backend_->release_host(data_);
        data_ = nullptr;
        size_ = 0;
    }
    float* data() const { return data_; }
    std::size_t size() const { return size_; }

  private:
    Backend* backend_ = nullptr;
    float* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace kvs
