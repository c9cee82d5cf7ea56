#include "kernels/emu/emulated_cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/files/gguf_file.h"
#include "core/util/error.h"
#include "kernels/cuda/attention_plan.h"
#include "kernels/cuda/fused_args.h"
#include "kernels/emu/emu_kernels.h"

namespace kvs {
namespace {

// Wall time of one emulated op, added to the backend's per-op totals and, while the op strip
// records, to the list of calls.
class OpTimer {
  public:
    OpTimer(OpTimes& t, Op op, std::vector<OpCall>* each = nullptr)
        : times_(t), op_(op), each_(each), start_(std::chrono::steady_clock::now()) {}
    ~OpTimer() {
        const auto i = static_cast<int>(op_);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        times_.seconds[i] += s;
        times_.calls[i] += 1;
        if (each_) each_->push_back({op_, s});
    }
    OpTimer(const OpTimer&) = delete;
    OpTimer& operator=(const OpTimer&) = delete;

  private:
    OpTimes& times_;
    Op op_;
    std::vector<OpCall>* each_;
    std::chrono::steady_clock::time_point start_;
};

constexpr int kReleaseSlot = kOpCount;  // seen_[kReleaseSlot] counts releases

}  // namespace

EmuFault parse_emu_fault(const std::string& spec) {
    const auto c1 = spec.find(':'), c2 = spec.find(':', c1 == std::string::npos ? c1 : c1 + 1);
    const auto bad = [&] {
        return Error(
            "KVSCOPE_EMU_FAULT='" + spec +
            "': want op:call:kind, kind launch, fault or release (e.g. attention:3:fault)");
    };
    if (c1 == std::string::npos || c2 == std::string::npos) throw bad();
    const std::string op = spec.substr(0, c1), call = spec.substr(c1 + 1, c2 - c1 - 1),
                      kind = spec.substr(c2 + 1);
    EmuFault f;
    if (kind == "launch")
        f.kind = EmuFault::Kind::Launch;
    else if (kind == "fault")
        f.kind = EmuFault::Kind::Fault;
    else if (kind == "release")
        f.kind = EmuFault::Kind::Release;
    else
        throw bad();
    if (call.empty() || call.size() > 6 || call.find_first_not_of("0123456789") != call.npos)
        throw bad();
    f.call = std::stoi(call);
    if (f.call < 1) throw bad();
    bool found = f.kind == EmuFault::Kind::Release && op == "release";
    for (int i = 0; i < kOpCount && !found; ++i)
        if (op == op_name(static_cast<Op>(i))) {
            f.op = static_cast<Op>(i);
            found = true;
        }
    if (!found) throw bad();
    return f;
}

EmulatedCudaBackend::EmulatedCudaBackend(const KernelRunner& kernels) : kernels_(&kernels) {
    if (const char* spec = std::getenv("KVSCOPE_EMU_FAULT"); spec && *spec)
        inject(parse_emu_fault(spec));
    if (const char* g = std::getenv("KVSCOPE_CUDA_GRAPHS"); g && std::string(g) == "0")
        graphs_on_ = false;
    if (const char* f = std::getenv("KVSCOPE_CUDA_FUSED"); f && std::string(f) == "0")
        fused_on_ = false;
}

std::string EmulatedCudaBackend::device() const {
    return kernels_->device;
}

void EmulatedCudaBackend::inject(const EmuFault& f) {
    EmuFault g = f;
    if (g.error.empty())
        g.error = f.kind == EmuFault::Kind::Launch  ? "no kernel image is available for execution"
                  : f.kind == EmuFault::Kind::Fault ? "an illegal memory access was encountered"
                                                    : "invalid argument";
    const int slot = f.kind == EmuFault::Kind::Release ? kReleaseSlot : static_cast<int>(f.op);
    g.call += seen_[slot];  // counted from now
    faults_.push_back(g);
}

void EmulatedCudaBackend::wait() {
    // As the cuda backend: a stream with nothing queued since the last wait is not waited for.
    if (queued_ == 0 && device_fault_.empty()) return ledger_.report();
    queued_ = 0;
    ++counts_.syncs;
    if (!device_fault_.empty()) ledger_.keep_sync(device_fault_);
    // As the cuda backend: a fused attention cut short leaves its tickets part-counted.
    if (ledger_.broken() && !tickets_reset_) {
        tickets_reset_ = true;
        std::fill(tickets_.begin(), tickets_.end(), 0);
    }
    ledger_.report();
}

bool EmulatedCudaBackend::record(std::function<void()> node, int kernels, int copies) {
    if (!capturing_) return false;
    recording_.nodes.push_back(std::move(node));
    recording_.kernels += kernels;
    recording_.copies += copies;
    return true;
}

template <class F, class G>
void EmulatedCudaBackend::launch(Op op, F&& kernel, int kernels, G cut) {
    // While capturing: recorded, not run, not counted as a launch (a graph replay counts it).
    if (record(kernel, kernels, 0)) return;
    OpTimer timer(times_, op, each());
    counts_.launches += kernels;
    ++queued_;
    const int n = ++seen_[static_cast<int>(op)];
    // A device that has faulted refuses every later launch with the fault (sticky), as CUDA does
    // once the host has seen it; before that, the queued kernels simply do not run.
    if (!device_fault_.empty() && ledger_.broken())
        throw Error(std::string("CUDA error in ") + op_name(op) + ": " + device_fault_);
    for (const EmuFault& f : faults_)
        if (f.kind != EmuFault::Kind::Release && f.op == op && f.call == n) {
            if (f.kind == EmuFault::Kind::Launch)
                throw Error(std::string("CUDA error in ") + op_name(op) + ": " + f.error);
            device_fault_ = f.error;
            cut();
        }
    if (device_fault_.empty()) kernel();
    ledger_.queued(op_name(op));
    if (ledger_.sync_each_op()) wait();
}

void EmulatedCudaBackend::set_step(const int* tokens, const int* positions, int n) {
    if (n < 0 || n > kMaxSequences)
        throw Error("a graph step of " + std::to_string(n) + " sequences (at most " +
                    std::to_string(kMaxSequences) + ")");
    ++counts_.h2d;  // [token ids | positions] in one copy
    ++queued_;
    std::copy(tokens, tokens + n, step_.begin());
    // Broken on purpose (break_step_positions_for_test): written for the recording step only.
    if (!stale_positions_ || graphs_.empty())
        std::copy(positions, positions + n, step_.begin() + kMaxSequences);
}

void EmulatedCudaBackend::begin_capture() {
    if (capturing_) throw Error("a graph capture inside a graph capture");
    capturing_ = true;
    capture_seq_ = 0;
    recording_ = {};
    recording_.epoch = partial_epoch_;
}

void EmulatedCudaBackend::position_of(int seq, int max_keys) {
    if (seq < 0 || seq >= kMaxSequences)
        throw Error("no graph step sequence " + std::to_string(seq));
    capture_seq_ = seq;
    capture_keys_ = max_keys;
}

int EmulatedCudaBackend::end_capture() {
    if (!capturing_) throw Error("end of a graph capture that was not begun");
    capturing_ = false;
    ++counts_.captures;
    const int id = next_graph_++;
    graphs_[id] = std::move(recording_);
    recording_ = {};
    return id;
}

void EmulatedCudaBackend::abort_capture() noexcept {
    capturing_ = false;
    recording_ = {};
}

bool EmulatedCudaBackend::replay(int graph) {
    const auto it = graphs_.find(graph);
    if (it == graphs_.end() || it->second.epoch != partial_epoch_) return false;
    if (!device_fault_.empty() && ledger_.broken())
        throw Error("CUDA error in the decode graph: " + device_fault_);
    ++counts_.graph_launches;
    counts_.graph_kernels += it->second.kernels;
    counts_.graph_copies += it->second.copies;
    ++queued_;
    if (device_fault_.empty())
        for (const auto& node : it->second.nodes) node();
    ledger_.queued("the decode graph");
    if (ledger_.sync_each_op()) wait();
    return true;
}

void EmulatedCudaBackend::drop(int graph) noexcept {
    graphs_.erase(graph);
}

DeviceSpan EmulatedCudaBackend::alloc(std::size_t n) {
    ++counts_.allocs;
    ++queued_;  // the cuda backend zeroes it with cudaMemsetAsync
    return {new float[n](), n};
}

void EmulatedCudaBackend::release(DeviceSpan s) noexcept {
    ++counts_.frees;
    const int n = ++seen_[kReleaseSlot];
    delete[] s.data;
    // cudaFree returns a sticky fault again; an injected release failure stands for any other.
    if (!device_fault_.empty()) ledger_.keep_call("cudaFree", device_fault_);
    for (const EmuFault& f : faults_)
        if (f.kind == EmuFault::Kind::Release && f.call == n)
            ledger_.keep_call("cudaFree", f.error);
}

void EmulatedCudaBackend::upload(DeviceSpan dst, const float* src, std::size_t n) {
    {
        OpTimer timer(times_, Op::Transfer);
        ++counts_.h2d;
        ++queued_;
        if (device_fault_.empty()) std::memcpy(dst.data, src, n * sizeof(float));
    }
    wait();  // as the cuda backend: src is pageable memory the caller may free
}

void EmulatedCudaBackend::download(float* dst, DeviceSpan src, std::size_t n) {
    {
        OpTimer timer(times_, Op::Transfer);
        ++counts_.d2h;
        counts_.d2h_floats += n;
        ++queued_;
        if (device_fault_.empty()) std::memcpy(dst, src.data, n * sizeof(float));
    }
    wait();
}

void EmulatedCudaBackend::copy_rows(DeviceSpan dst, std::size_t dst_stride, DeviceSpan src,
                                    std::size_t src_stride, std::size_t rows, std::size_t row_len) {
    // cudaMemcpy2DAsync on the stream: queued like a launch, no wait.
    if (rows == 0 || row_len == 0) return;  // as the cuda backend: nothing queued
    const auto copy = [=] {
        for (std::size_t r = 0; r < rows; ++r)
            std::memcpy(dst.data + r * dst_stride, src.data + r * src_stride,
                        row_len * sizeof(float));
    };
    if (record(copy, 0, 1)) return;
    OpTimer timer(times_, Op::Transfer);
    ++counts_.d2d;
    ++queued_;
    if (device_fault_.empty()) copy();
}

void EmulatedCudaBackend::synchronize() {
    wait();
}

// Each op's kernel is a closure over its arguments by value, so that a capture can keep it.
void EmulatedCudaBackend::embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) {
    const KernelRunner* run = kernels_;
    // Recorded: the token ids are the step's, on the device already (set_step). Else they travel
    // to the device first.
    if (!capturing_) ++counts_.h2d;
    const kern::EmbedArgs a{x.data, table.data, capturing_ ? step_.data() : tokens, T, dim};
    const kern::LaunchShape s = kern::embed_shape(T, dim);
    launch(Op::Embed, [=] { run->embed(s, a); });
}

void EmulatedCudaBackend::rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim,
                                  float eps) {
    const KernelRunner* run = kernels_;
    const kern::RmsNormArgs a{out.data, x.data, w.data, T, dim, eps};
    const kern::LaunchShape s = kern::rmsnorm_shape(T, blocks_.rmsnorm);
    launch(Op::RmsNorm, [=] { run->rmsnorm(s, a); });
}

void EmulatedCudaBackend::matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) {
    const KernelRunner* run = kernels_;
    const kern::MatmulArgs a{out.data, x.data, w.data, T, n, d};
    if (kern::matmul_uses_matvec(T)) {
        const kern::LaunchShape s = kern::matvec_shape(d, blocks_.matvec_rows);
        launch(Op::Matmul, [=] { run->matvec(s, a); });
    } else {
        const kern::LaunchShape s = kern::matmul_tiled_shape(T, d);
        launch(Op::Matmul, [=] { run->matmul_tiled(s, a); });
    }
}

bool EmulatedCudaBackend::runs_compact(GgmlType type) const {
    return type == GgmlType::F16 || type == GgmlType::BF16;
}

// The same two kernels over 16-bit weights (the cuda backend hands T > 1 to cuBLAS on a
// float32 copy instead; the emulator keeps its own GEMM).
void EmulatedCudaBackend::matmul_compact(DeviceSpan out, DeviceSpan x, GgmlType type,
                                         const unsigned char* w, int T, int n, int d) {
    const KernelRunner* run = kernels_;
    if (!runs_compact(type)) Backend::matmul_compact(out, x, type, w, T, n, d);
    const kern::MatmulArgs a{out.data, x.data, kern::MatrixRef(w, kern::weight_kind(type)),
                             T,        n,      d};
    if (kern::matmul_uses_matvec(T)) {
        const kern::LaunchShape s = kern::matvec_shape(d, blocks_.matvec_rows);
        launch(Op::Matmul, [=] { run->matvec(s, a); });
    } else {
        const kern::LaunchShape s = kern::matmul_tiled_shape(T, d);
        launch(Op::Matmul, [=] { run->matmul_tiled(s, a); });
    }
}

void EmulatedCudaBackend::embed_compact(DeviceSpan x, GgmlType type, const unsigned char* table,
                                        const int* tokens, int T, int dim) {
    const KernelRunner* run = kernels_;
    if (!runs_compact(type)) Backend::embed_compact(x, type, table, tokens, T, dim);
    if (!capturing_) ++counts_.h2d;  // the token ids, as embed's
    const kern::EmbedArgs a{x.data, kern::MatrixRef(table, kern::weight_kind(type)),
                            capturing_ ? step_.data() : tokens, T, dim};
    const kern::LaunchShape s = kern::embed_shape(T, dim);
    launch(Op::Embed, [=] { run->embed(s, a); });
}

const unsigned char* EmulatedCudaBackend::adopt_compact(const unsigned char* host,
                                                        std::size_t bytes) {
    ++counts_.allocs;
    ++counts_.h2d;
    std::vector<unsigned char> copy(host, host + bytes);
    const unsigned char* at = copy.data();
    compact_.emplace(at, std::move(copy));
    return at;
}

void EmulatedCudaBackend::release_compact(const unsigned char* adopted) noexcept {
    ++counts_.frees;
    compact_.erase(adopted);
}

void EmulatedCudaBackend::rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim,
                               int head_dim, DeviceSpan inv_freq) {
    const KernelRunner* run = kernels_;
    const kern::RopeArgs a{q.data,   k.data,        T,
                           pos0,     dim,           kv_dim,
                           head_dim, inv_freq.data, capturing_ ? step_position() : nullptr};
    const kern::LaunchShape s = kern::rope_shape(T, dim);
    launch(Op::Rope, [=] { run->rope(s, a); });
}

void EmulatedCudaBackend::kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k,
                                    DeviceSpan v, int pos0, int T, int kv_dim) {
    const KernelRunner* run = kernels_;
    const kern::KvAppendArgs a{cache_k.data, cache_v.data,
                               k.data,       v.data,
                               pos0,         T,
                               kv_dim,       capturing_ ? step_position() : nullptr};
    const kern::LaunchShape s = kern::kv_append_shape(T, kv_dim);
    launch(Op::KvAppend, [=] { run->kv_append(s, a); });
}

void EmulatedCudaBackend::kv_append_paged(DeviceSpan pool_k, DeviceSpan pool_v, DeviceSpan k,
                                          DeviceSpan v, int pos0, int T, int kv_dim,
                                          const BlockTable& table) {
    const KernelRunner* run = kernels_;
    if (capturing_) throw Error("a paged K/V append cannot be recorded into a decode graph");
    kern::KvAppendArgs a{pool_k.data, pool_v.data, k.data, v.data, pos0, T, kv_dim};
    a.block_table = table_to_device(table);
    a.block_size = table.block_size;
    const kern::LaunchShape s = kern::kv_append_shape(T, kv_dim);
    launch(Op::KvAppend, [=] { run->kv_append(s, a); });
}

const int* EmulatedCudaBackend::table_to_device(const BlockTable& table) {
    // One host-to-device copy of its ints, as the cuda backend's.
    table.check();
    ++counts_.h2d;
    paged_table_.assign(table.blocks, table.blocks + table.size);
    return paged_table_.data();
}

void EmulatedCudaBackend::attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k,
                                    DeviceSpan cache_v, DeviceSpan probs, int T, int pos0,
                                    int n_heads, int n_kv_heads, int head_dim, bool causal) {
    kern::AttentionPlan p = kern::plan_attention(
        {out, q, cache_k, cache_v, probs, T, pos0, n_heads, n_kv_heads, head_dim, causal},
        {capturing_, capturing_ ? step_position() : nullptr, capture_keys_}, blocks_.attention);
    launch_attention(p);
}

void EmulatedCudaBackend::launch_attention(kern::AttentionPlan p) {
    const KernelRunner* run = kernels_;
    if (!p.prefill) p.args.partial = ensure_partial(p.partial_floats);
    launch(
        Op::Attention,
        [=] {
            if (p.prefill) return run->attention_prefill(p.prefill_shape, p.args);
            run->attention_decode_split(p.split, p.args);
            run->attention_decode_combine(p.combine, p.args);
        },
        p.kernels());
}

void EmulatedCudaBackend::attention_paged(DeviceSpan out, DeviceSpan q, DeviceSpan pool_k,
                                          DeviceSpan pool_v, DeviceSpan probs, int T, int pos0,
                                          int n_heads, int n_kv_heads, int head_dim, bool causal,
                                          const PagedKeys& keys) {
    // Not recorded (a paged pass runs op by op), so the plan reads no step position.
    kern::AttentionPlan p = kern::plan_attention(
        {out, q, pool_k, pool_v, probs, T, pos0, n_heads, n_kv_heads, head_dim, causal},
        {false, nullptr, 0}, blocks_.attention);
    if (capturing_) throw Error("a paged attention cannot be recorded into a decode graph");
    kern::plan_paged(p, keys, table_to_device(keys.table));
    launch_attention(p);
}

void EmulatedCudaBackend::swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) {
    const KernelRunner* run = kernels_;
    const kern::SwigluArgs a{h1.data, h3.data, n};
    const kern::LaunchShape s = kern::elementwise_shape(n, blocks_.elementwise);
    launch(Op::SwiGLU, [=] { run->swiglu(s, a); });
}

void EmulatedCudaBackend::layernorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, DeviceSpan b, int T,
                                    int dim, float eps) {
    const KernelRunner* run = kernels_;
    const kern::LayerNormArgs a{out.data, x.data, w.data, b.data, T, dim, eps};
    const kern::LaunchShape s = kern::layernorm_shape(T, blocks_.layernorm);
    launch(Op::LayerNorm, [=] { run->layernorm(s, a); });
}

void EmulatedCudaBackend::gelu(DeviceSpan h, std::size_t n) {
    const KernelRunner* run = kernels_;
    const kern::GeluArgs a{h.data, n};
    const kern::LaunchShape s = kern::elementwise_shape(n, blocks_.elementwise);
    launch(Op::Gelu, [=] { run->gelu(s, a); });
}

void EmulatedCudaBackend::add(DeviceSpan x, DeviceSpan y, std::size_t n) {
    const KernelRunner* run = kernels_;
    const kern::AddArgs a{x.data, y.data, n};
    const kern::LaunchShape s = kern::elementwise_shape(n, blocks_.elementwise);
    launch(Op::Add, [=] { run->add(s, a); });
}

void EmulatedCudaBackend::add_bias(DeviceSpan x, DeviceSpan b, int T, int n) {
    const KernelRunner* run = kernels_;
    const std::size_t all = std::size_t(T) * n;
    const kern::AddArgs a{x.data, b.data, all, std::size_t(n)};
    const kern::LaunchShape s = kern::elementwise_shape(all, blocks_.elementwise);
    launch(Op::Add, [=] { run->add(s, a); });
}

float* EmulatedCudaBackend::ensure_partial(std::size_t need) {
    // Sized for the whole cache, so it grows only when the cache does.
    if (need <= decode_partial_.size()) return decode_partial_.data();
    if (!decode_partial_.empty()) ++counts_.frees;
    ++counts_.allocs;
    decode_partial_.assign(need, 0.0f);
    ++partial_epoch_;  // a graph recorded before points at the old buffer
    recording_.epoch = partial_epoch_;
    return decode_partial_.data();
}

bool EmulatedCudaBackend::fused_reads(GgmlType type) const {
    return kern::weight_kind(type) >= 0;
}

bool EmulatedCudaBackend::fused_fits(int n_heads, int n_kv_heads, int head_dim) const {
    return n_kv_heads <= kMaxKvHeads &&
           kern::attention_chunk_keys(n_heads / n_kv_heads, head_dim, false) > 0;
}

void EmulatedCudaBackend::norm_qkv(const NormQkv& a) {
    const KernelRunner* run = kernels_;
    // Recorded: the token id and the position are the step's, on the device (set_step). Else the
    // token id travels to the device first, as embed's.
    if (!a.embed.empty() && !capturing_) ++counts_.h2d;
    kern::FusedPlaces at;
    at.token = capturing_ ? step_.data() + capture_seq_ : a.token;
    at.pos_at = capturing_ ? step_position() : nullptr;
    const kern::FusedQkvArgs k = kern::fused_qkv_args(a, at);
    const kern::LaunchShape s = kern::fused_qkv_shape(a.dim, a.kv_dim);
    launch(Op::Fused, [=] { run->fused_norm_qkv(s, k); });
}

void EmulatedCudaBackend::attention(const Attend& a) {
    const KernelRunner* run = kernels_;
    kern::FusedPlaces at;
    at.pos_at = capturing_ ? step_position() : nullptr;
    at.partial = ensure_partial(
        kern::decode_partial_floats_for_cache(a.cache_k.size, a.n_heads, a.n_kv_heads, a.head_dim));
    at.tickets = tickets_.data();
    at.max_keys = capture_keys_;
    const kern::FusedAttentionArgs k = kern::fused_attention_args(a, at);
    const kern::LaunchShape s = kern::fused_attention_launch(a, at);
    // A fault part-way: every block but the last ran, each taking its ticket.
    const int before = static_cast<int>(s.grid.x * s.grid.y * s.grid.z) - 1;
    launch(
        Op::Fused, [=] { run->fused_attention(s, k, -1); }, 1,
        [=] { run->fused_attention(s, k, before); });
}

bool EmulatedCudaBackend::tickets_zero() const {
    return std::all_of(tickets_.begin(), tickets_.end(), [](int t) { return t == 0; });
}

void EmulatedCudaBackend::matvec_add(DeviceSpan x, DeviceSpan in, const FusedMatrix& w, int n,
                                     int d) {
    const KernelRunner* run = kernels_;
    kern::FusedMatvecAddArgs k{x.data, in.data, kern::matrix_ref(w), n, d, reversed_sums_ ? 1 : 0};
    const kern::LaunchShape s = kern::fused_rows_shape(d);
    launch(Op::Fused, [=] { run->fused_matvec_add(s, k); });
}

void EmulatedCudaBackend::norm_gate_up(DeviceSpan h, DeviceSpan x, DeviceSpan norm,
                                       const FusedMatrix& w1, const FusedMatrix& w3, int dim,
                                       int hidden, float eps) {
    const KernelRunner* run = kernels_;
    const kern::FusedGateUpArgs k{
        x.data, norm.data, kern::matrix_ref(w1), kern::matrix_ref(w3), h.data, dim, hidden, eps};
    const kern::LaunchShape s = kern::fused_rows_shape(hidden, dim);
    launch(Op::Fused, [=] { run->fused_norm_gate_up(s, k); });
}

void EmulatedCudaBackend::norm_logits(DeviceSpan logits, DeviceSpan x, DeviceSpan norm,
                                      const FusedMatrix& w, int dim, int vocab, float eps) {
    const KernelRunner* run = kernels_;
    const kern::FusedLogitsArgs k{x.data, norm.data, kern::matrix_ref(w), logits.data, dim,
                                  vocab,  eps};
    const kern::LaunchShape s = kern::fused_rows_shape(vocab, dim);
    launch(Op::Fused, [=] { run->fused_norm_logits(s, k); });
}

}  // namespace kvs
