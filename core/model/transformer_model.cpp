#include "core/model/transformer_model.h"

#include <algorithm>
#include <cstring>

#include "core/model/backend.h"
#include "core/model/fused_decode.h"
#include "core/model/fused_ops.h"
#include "core/model/kv_blocks.h"
#include "core/model/kv_rows.h"
#include "core/model/rope_frequencies.h"
#include "core/model/step_graphs.h"
#include "core/util/error.h"

namespace kvs {
namespace {

// Floats between a recorded decode pass's probs rows for n_keys keys: a power of two from 64 up
// (at most the capacity), so a graph is recorded again only when the keys outgrow it, and what a
// step downloads is at most about twice the keys, not the capacity.
std::size_t probs_bucket(int n_keys, int capacity) {
    std::size_t b = 64;
    while (b < std::size_t(n_keys)) b *= 2;
    return std::min(b, std::size_t(capacity));
}

// Sequences of a Llama model on a backend: the weights uploaded once, one KV cache per slot
// (contiguous, or paged: the slots' rows in a pool's blocks), scratch sized for the largest pass
// so far. Runner is the one-sequence view (slot 0).
class TransformerRunner final : public Runner, public BatchRunner {
  public:
    TransformerRunner(const TransformerModel& m, Backend& be, int slots,
                      const KvBlockPool* pool = nullptr)
        : m_(m), c_(m.config()), be_(be), W_(&m.weights()), paged_(pool != nullptr) {
        // Compact matrices (and a compact embedding table) are read by the backend where it keeps
        // them: the CPU in host memory, where they lie; a GPU in its own copy (adopt_compact). A
        // backend that does not read their types gets them expanded into float32 instead: the
        // same values.
        const CompactWeights& cw = m.compact();
        compact_ = cw.held();
        for (const CompactMatrix& cm : cw.all()) compact_ = compact_ && be.runs_compact(cm.type);
        if (cw.embedding.data) compact_ = compact_ && be.runs_compact(cw.embedding.type);
        if (cw.held() && !compact_) expand(m);
        if (compact_) adopt_compact(cw);
        // The CPU computes on the model's (mapped) floats; other backends copy them once.
        weights_ = DeviceBuffer::adopt(be, W_->all.data(), W_->all.size());
        // RoPE's frequencies, worked out once for the model's base and scaling: [head_dim / 2]
        if (!c_.gpt2()) {  // GPT-2 learns its positions instead
            const std::vector<float> inv_freq = rope_inverse_frequencies(c_);
            inv_freq_ = DeviceBuffer(be, inv_freq.size());
            be.upload(inv_freq_.span(), inv_freq.data(), inv_freq.size());
        }
        for (int i = 0; i < slots; ++i)
            caches_.push_back(pool ? std::make_unique<KvCache>(*pool, c_.n_layers, c_.seq_len,
                                                               c_.n_kv_heads, c_.head_dim())
                                   : std::make_unique<KvCache>(be, c_.n_layers, c_.seq_len,
                                                               c_.n_kv_heads, c_.head_dim()));
        // A serving runner's scratch comes with its pool, before the first pass: a whole
        // context's rows, written once so its memory is mapped (a run's passes are timed, its
        // setup is not).
        if (pool) {
            ensure_scratch(c_.seq_len, 0, std::size_t(slots) * c_.vocab_size);
            for (DeviceBuffer* b : {&x_, &xb_, &q_, &k_, &v_, &att_, &h1_, &h3_, &stage_}) {
                const std::vector<float> zeros(b->size(), 0.0f);
                if (b->size() > 0) be.upload(b->span(), zeros.data(), zeros.size());
            }
        }
        be.synchronize();
    }
    ~TransformerRunner() override {
        if (graph_ != 0) be_.graphs()->drop(graph_);
        for (const unsigned char* p : adopted_) be_.release_compact(p);
    }
    TransformerRunner(const TransformerRunner&) = delete;
    TransformerRunner& operator=(const TransformerRunner&) = delete;

    // Runner: one sequence in slot 0.
    void forward(std::span<const int> tokens, const Capture& want, ForwardResult& out) override {
        const SeqInput one{0, tokens};
        forward_batch(std::span<const SeqInput>(&one, 1), want, std::span<ForwardResult>(&out, 1));
    }
    void reset() override { caches_[0]->set_len(0); }
    void set_mask(AttentionMask m) override { mask_ = m; }
    bool records_graphs() const override {
        const StepGraphs* g = be_.graphs();
        return g && g->graphs_on() && !c_.gpt2();  // plan() records GPT-2 steps never
    }
    bool runs_fused() const override { return fused_fits(); }
    void truncate(int len) override {
        if (len < 0 || len > caches_[0]->len()) throw Error("truncate past the cache's rows");
        caches_[0]->set_len(len);
    }
    KvShape kv() const override { return caches_[0]->shape(); }
    std::string backend_name() const override { return be_.name(); }
    std::string device() const override { return be_.device(); }
    Backend* backend() override { return &be_; }
    void read_kv_rows(int first, int n, std::vector<float>& out) override {
        read_rows(*caches_[0], first, n, out);
    }

    // BatchRunner
    int max_batch() const override { return static_cast<int>(caches_.size()); }
    void forward_batch(std::span<const SeqInput> seqs, const Capture& want,
                       std::span<ForwardResult> out) override;
    void reset_slot(int slot) override {
        if (paged_)
            caches_.at(slot)->set_blocks({}, 0);
        else
            caches_.at(slot)->set_len(0);
    }
    void set_blocks(int slot, std::span<const int> table, int len) override {
        caches_.at(slot)->set_blocks(table, len);
    }
    void set_window(int sinks, int window, SinkPositions positions) override {
        if (!paged_) BatchRunner::set_window(sinks, window, positions);
        if (sinks < 0 || window < 0) throw Error("a window or sinks below 0");
        if (c_.gpt2() && window > 0 && sinks > 0 && positions == SinkPositions::Cache)
            throw Error("GPT-2 learns its positions: its sinks keep their original ones");
        sinks_ = sinks, window_ = window, sink_positions_ = positions;
    }
    KvShape kv(int slot) const override { return caches_.at(slot)->shape(); }
    void read_kv_rows(int slot, int first, int n, std::vector<float>& out) override {
        read_rows(*caches_.at(slot), first, n, out);
    }

  private:
    // The backend's view of a host weight pointer: same offset into the adopted floats.
    DeviceSpan w(const float* host, std::size_t n) const {
        return weights_.at(static_cast<std::size_t>(host - W_->all.data()), n);
    }
    // out = x W^T for a matrix W [d, n] whose floats start at `host`: its compact bytes
    // (`compact`, the backend's copy) when the model keeps them and the backend reads them, else
    // the floats.
    void matmul(DeviceSpan out, DeviceSpan x, const float* host, const CompactMatrix& compact,
                int T, int n, int d) {
        if (compact_ && compact.data)
            be_.matmul_compact(out, x, compact.type, compact.data, T, n, d);
        else
            be_.matmul(out, x, w(host, std::size_t(d) * n), T, n, d);
    }
    // x[t, :] = the embedding table's row tokens[t], for the R rows of this pass: [R, dim]
    void embed(int R) {
        op(OpKind::Embedding, -1, R);
        const CompactMatrix& e = C_.embedding;
        if (compact_ && e.data)
            be_.embed_compact(x_.span(), e.type, e.data, all_tokens_.data(), R, c_.dim);
        else
            be_.embed(x_.span(), w(W_->token_embedding, std::size_t(c_.vocab_size) * c_.dim),
                      all_tokens_.data(), R, c_.dim);
    }
    // The model's float32 weights with every compact matrix (and table) dequantised, for a
    // backend that does not read their types (which copies them once, as a float32 model's).
    void expand(const TransformerModel& m) {
        expanded_ = expand_to_float32(m.config(), m.weights(), m.compact());
        W_ = &expanded_;
    }
    // Layer l's matrix of a kind, compact (the backend's copy): none when the model keeps
    // float32 only.
    static CompactMatrix at(const std::vector<CompactMatrix>& list, int l) {
        return list.empty() ? CompactMatrix{} : list[l];
    }
    // The model's compact matrices as the backend reads them (Backend::adopt_compact): C_.
    void adopt_compact(const CompactWeights& cw);
    // Whether a decode step of this model may run through the backend's fused kernels.
    bool fused_fits() const;
    // A matrix of a kind for the fused kernels: its compact copy, or its floats.
    FusedMatrix fused_matrix(MatrixKind kind, int layer) const;
    // Where one pass's results sit, in floats, in the device staging buffer and in its host copy:
    // [logits: B x vocab | per sequence: attention [L, H, keep, n_keys], q and attention output
    // [L, keep, dim] each, K/V rows [L, 2, kv_keep, kv_dim]]. Everything a step returns is
    // gathered there on the device and comes back in one download (one device-to-host copy, one
    // stream sync per step on a GPU).
    struct StageLayout {
        std::vector<std::size_t> probs, q, attn_out, kv;  // per sequence: offsets of its regions
        std::size_t total = 0;
    };
    // One pass's bookkeeping, beside the forward pass rather than inside it: sequence i's T[i]
    // tokens are rows [first[i], first[i] + T[i]) of the stacked activations, at positions
    // pos0[i].. of its cache; the captures return its last keep[i] rows (kv_keep[i] K/V rows).
    struct Pass {
        int B = 0, R = 0;  // sequences, rows in all
        std::vector<int> first, T, pos0, keep, kv_keep;
        std::size_t probs_floats = 0;  // scratch for a sequence whose kept rows are fewer than T
        // Through a CUDA Graph (core/model/step_graphs.h): every sequence one row (decode), per-op
        // timing off, a backend with graphs on. Its probs rows in the stage are then
        // probs_bucket(n_keys) floats apart: nothing in the stage moves with the position until
        // the keys outgrow the bucket, when the graph is recorded again.
        bool graph = false;
        // Through the backend's fused decode kernels (core/model/fused_ops.h): one sequence, one
        // row, per-op timing off; recorded into the graph when `graph` is set too.
        bool fused = false;
        std::size_t probs_row(int i) const {
            return graph ? probs_bucket(pos0[i] + T[i], capacity) : pos0[i] + T[i];
        }
        int capacity = 0;
        StageLayout stage;
    };
    // Checks the inputs, lays out the pass and stacks the tokens into all_tokens_.
    Pass plan(std::span<const SeqInput> seqs, const Capture& want);
    // The forward pass itself, run.c's shape: every row through every layer, logits of each
    // sequence's last row into the stage.
    void run_layers(std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // GPT-2's forward pass, the same ops in its design (ModelConfig::gpt2()).
    void run_gpt2_layers(std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // The same pass as one graph launch: the step's token ids and positions to the device, the
    // graph replayed, recorded first (run_layers or run_fused under capture) when there is none
    // that fits.
    void run_graph(std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // One sequence's decode step in the backend's fused kernels (core/model/fused_decode.h), its
    // captures written by the kernels straight into the stage.
    void run_fused(std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // Layer l's attention for every sequence of the pass: attend() each on a contiguous cache;
    // on a paged one, first every sequence's new rows into their blocks (store_paged), then each
    // one's attention (attend_paged), so that a sequence reading blocks another computes in this
    // same pass (a prefix found in the cache as it is computed) reads them written.
    void attend_all(int l, std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // Layer l's attention for sequence i alone: RoPE at its positions, its cache, its captures.
    void attend(int l, KvCache& cache, const Pass& p, int i, const Capture& want);
    void store_paged(int l, KvCache& cache, const Pass& p, int i, const Capture& want);
    void attend_paged(int l, KvCache& cache, const Pass& p, int i, const Capture& want);
    // Sequence i's rows of this pass: q, att: [T, dim]; k, v: [T, kv_dim].
    struct SeqRows {
        DeviceSpan q, k, v, att;
    };
    SeqRows rows_of(const Pass& p, int i) const;
    // RoPE on sequence i's q and k rows at their positions (none for GPT-2).
    void rope_rows(int l, const Pass& p, int i, const SeqRows& r);
    // The K/V rows just computed into the stage, for a pass whose finish() cannot read them from
    // a contiguous cache (a graph's, a paged one's): [L, 2, kv_keep, kv_dim].
    void keep_new_kv(int l, const Pass& p, int i, const Capture& want, const SeqRows& r);
    // Where layer l's attention weights of sequence i go: straight into the stage, scratch, or
    // nowhere; then, after the attention, the kept rows and vectors into the stage.
    DeviceSpan probs_target(int l, const Pass& p, int i, const Capture& want) const;
    void keep_attention(int l, const Pass& p, int i, const Capture& want, const SeqRows& r);
    // The keys a paged pass of sequence i sees, in the order its attention counts them: the
    // cached rows [0, sinks) (every cached row without a window), then [from, pos0 + T) (the
    // window's rows and the pass's own).
    struct SeenKeys {
        int sinks = 0, from = 0, count = 0;
    };
    SeenKeys seen_keys(int pos0, int T) const;
    // How far StreamingLLM's numbering moves the sinks forward for this pass (0: not at all).
    int sink_shift(const SeenKeys& keys) const;
    // k rows [rows, kv_dim] turned by `shift` positions more (RoPE composes: a key rotated for
    // position p, turned by d, is the key rotated for p + d).
    void shift_keys(int l, DeviceSpan k, int rows, int shift);
    // Cache lengths, K/V rows gathered, one download, each sequence's results unpacked.
    void finish(std::span<const SeqInput> seqs, const Pass& p, const Capture& want,
                std::span<ForwardResult> out);
    // The op strip: one record per op as it is issued (rows, and the position the rows start
    // at for the attention ops); a batch logs into out[0].
    void op(OpKind k, int layer, int n_rows, int at = 0, bool own_call = true) {
        if (!log_) return;
        log_->add(k, c_, layer, n_rows, at, own_call);
        log_seq_.push_back(op_seq_);
    }
    // The backend's ops as the passes issue them, each logged first for the op strip (`op`), so
    // a pass reads as its math, one line an op. At: the op's kind and layer (-1: outside them).
    struct At {
        OpKind kind;
        int layer;
    };
    // out = x W^T: [T, d] from x [T, n] (compact or float32 weights: matmul above).
    void matmul(At at, DeviceSpan out, DeviceSpan x, const float* host, const CompactMatrix& cm,
                int T, int n, int d) {
        op(at.kind, at.layer, T);
        matmul(out, x, host, cm, T, n, d);
    }
    // out = rmsnorm(x) * gain: [R, dim]
    void rmsnorm(At at, DeviceSpan out, DeviceSpan x, const float* gain, int R) {
        op(at.kind, at.layer, R);
        be_.rmsnorm(out, x, w(gain, c_.dim), R, c_.dim, c_.norm_eps);
    }
    // out = (x - mean) / deviation * gain + bias: [R, dim]
    void layernorm(At at, DeviceSpan out, DeviceSpan x, const float* gain, const float* bias,
                   int R) {
        op(at.kind, at.layer, R);
        be_.layernorm(out, x, w(gain, c_.dim), w(bias, c_.dim), R, c_.dim, c_.norm_eps);
    }
    // x[r, :] += b for every row r: [R, n]
    void add_bias(At at, DeviceSpan x, const float* b, int R, int n) {
        op(at.kind, at.layer, R);
        be_.add_bias(x, w(b, std::size_t(n)), R, n);
    }
    // x += y: [R, dim] (a residual connection)
    void add(At at, DeviceSpan x, DeviceSpan y, int R) {
        op(at.kind, at.layer, R);
        be_.add(x, y, std::size_t(R) * c_.dim);
    }
    // h1 = silu(h1) * h3: [R, hidden]
    void swiglu(At at, DeviceSpan h1, DeviceSpan h3, int R) {
        op(at.kind, at.layer, R);
        be_.swiglu(h1, h3, std::size_t(R) * c_.hidden_dim);
    }
    // h = gelu(h): [R, hidden]
    void gelu(At at, DeviceSpan h, int R) {
        op(at.kind, at.layer, R);
        be_.gelu(h, std::size_t(R) * c_.hidden_dim);
    }
    // out[r, :] = table[ids[r], :]: [R, dim] from a float32 table of `rows` rows
    void lookup(At at, DeviceSpan out, const float* table, int rows, const int* ids, int R) {
        op(at.kind, at.layer, R);
        be_.embed(out, w(table, std::size_t(rows) * c_.dim), ids, R, c_.dim);
    }
    // A replayed graph issues no op: its log is the recording's, each op's shapes and FLOPs
    // counted again at its sequence's position now.
    void replay_log(const Pass& p);
    void ensure_scratch(int rows, std::size_t probs_floats, std::size_t stage_floats);
    // The last `keep` of a sequence's T rows [T, dim] into layer `layer` of the stage region
    // `at` [n_layers, keep, dim] (one device-side copy).
    void gather_rows(DeviceSpan rows, std::size_t at, int layer, int T, int keep);
    void unpack(const StageLayout& at, int i, int keep, int kv_keep, std::size_t probs_row,
                const Capture& want, ForwardResult& out) const;
    void read_rows(const KvCache& cache, int first, int n, std::vector<float>& out);
    // A paged cache's rows [first, first + n) of layer l, K and V, to or from contiguous rows
    // (`rows_k`, `rows_v`: [n, kv_dim]) through its block table, one copy per run in a block.
    enum class Way { FromBlocks, ToBlocks };
    void through_table(const KvCache& cache, int l, int first, int n, DeviceSpan rows_k,
                       DeviceSpan rows_v, Way way);

    const TransformerModel& m_;
    const ModelConfig& c_;
    Backend& be_;
    bool compact_ = false;  // the backend reads the model's compact matrices where they lie
    // The float32 views the passes read: the model's, or (compact weights on a backend that
    // multiplies float32 only) expanded_.
    const LlamaWeights* W_ = nullptr;
    LlamaWeights expanded_;
    DeviceBuffer weights_;
    DeviceBuffer inv_freq_;  // [head_dim / 2]: RoPE's frequencies (core/model/rope_frequencies.h)
    std::vector<std::unique_ptr<KvCache>> caches_;
    bool paged_ = false;
    int sinks_ = 0, window_ = 0;  // paged: the earlier rows a pass sees (window 0: all)
    SinkPositions sink_positions_ = SinkPositions::Cache;
    // Paged, read in place: each key's K and V row address, [keys]; StreamingLLM's sinks moved
    // forward, [sinks, kv_dim]; RoPE's q side for shift_keys, [dim] (its result unused).
    std::vector<const float*> key_k_, key_v_;
    DeviceBuffer sink_k_, shift_q_;
    // Paged, on a backend that does not read rows in place or from a quantised pool: the rows a
    // pass of one slot sees, of one layer, gathered (dequantised) into contiguous rows:
    // [keys, kv_dim] each.
    DeviceBuffer gather_k_, gather_v_;
    CompactWeights C_;  // the model's compact matrices, each pointing at the backend's copy
    std::vector<const unsigned char*> adopted_;
    int scratch_rows_ = 0;
    DeviceBuffer x_, xb_, q_, k_, v_, att_, h1_, h3_, probs_, stage_;
    HostBuffer host_;  // the host copy of stage_ (page-locked on a GPU)
    std::vector<int> all_tokens_;
    std::vector<int> all_positions_;  // GPT-2: each row's position, the learned table's row
    OpLog* log_ = nullptr;            // this pass's op strip, or none
    // For each op logged: the sequence whose position it was counted at (-1: none, the op does
    // not depend on it), and the sequence attend() is logging for now.
    std::vector<int> log_seq_;
    int op_seq_ = -1;
    OpLog graph_log_;  // the recorded pass's op strip, and its log_seq_
    std::vector<int> graph_log_seq_;
    AttentionMask mask_ = AttentionMask::Causal;
    // The recorded decode pass (0: none) and what it was recorded for: batch, slots, captures and
    // the addresses of the buffers it reads and writes. Another key: recorded again.
    int graph_ = 0;
    std::vector<std::size_t> graph_key_;
};

// Grow-only buffers: to `need`, at least doubling, so a sequence that grows by a token a step
// (uncached decoding) reallocates a logarithmic number of times, not at every step.
std::size_t grown(std::size_t have, std::size_t need) {
    return need <= have ? have : std::max(need, 2 * have);
}

void TransformerRunner::adopt_compact(const CompactWeights& cw) {
    if (!cw.held()) return;
    C_ = cw;
    const auto adopt = [&](CompactMatrix& m, MatrixKind kind) {
        const auto [rows, n] = matrix_shape(c_, kind);
        m.data = be_.adopt_compact(m.data, rows * ggml_row_bytes(m.type, n));
        adopted_.push_back(m.data);
    };
    for (int l = 0; l < c_.n_layers; ++l) {
        adopt(C_.wq[l], MatrixKind::wq);
        adopt(C_.wk[l], MatrixKind::wk);
        adopt(C_.wv[l], MatrixKind::wv);
        adopt(C_.wo[l], MatrixKind::wo);
        adopt(C_.w1[l], MatrixKind::w1);
        adopt(C_.w2[l], MatrixKind::w2);
        adopt(C_.w3[l], MatrixKind::w3);
    }
    adopt(C_.wcls, MatrixKind::wcls);
    if (C_.embedding.data) adopt(C_.embedding, MatrixKind::embedding);
}

bool TransformerRunner::fused_fits() const {
    FusedOps* f = be_.fused();
    if (!f || !f->fused_on() || c_.gpt2() ||
        !f->fused_fits(c_.n_heads, c_.n_kv_heads, c_.head_dim()))
        return false;
    if (!C_.held()) return true;
    if (C_.embedding.data) return false;  // the fused kernels read a float32 table
    for (const auto* list : {&C_.wq, &C_.wk, &C_.wv, &C_.wo, &C_.w1, &C_.w2, &C_.w3})
        for (const CompactMatrix& m : *list)
            if (!f->fused_reads(m.type)) return false;
    return f->fused_reads(C_.wcls.type);
}

FusedMatrix TransformerRunner::fused_matrix(MatrixKind kind, int l) const {
    const LlamaWeights& W = *W_;
    const auto [rows, n] = matrix_shape(c_, kind);
    const float* host = nullptr;
    CompactMatrix cm;
    switch (kind) {
        case MatrixKind::wq:
            host = W.wq, cm = at(C_.wq, l);
            break;
        case MatrixKind::wk:
            host = W.wk, cm = at(C_.wk, l);
            break;
        case MatrixKind::wv:
            host = W.wv, cm = at(C_.wv, l);
            break;
        case MatrixKind::wo:
            host = W.wo, cm = at(C_.wo, l);
            break;
        case MatrixKind::w1:
            host = W.w1, cm = at(C_.w1, l);
            break;
        case MatrixKind::w2:
            host = W.w2, cm = at(C_.w2, l);
            break;
        case MatrixKind::w3:
            host = W.w3, cm = at(C_.w3, l);
            break;
        case MatrixKind::wcls:
            host = W.wcls, cm = C_.wcls;
            break;
        case MatrixKind::embedding:  // not a matrix the fused kernels multiply by
            break;
    }
    if (cm.data) return {DeviceSpan{}, cm.type, cm.data};
    const std::size_t size = rows * n;
    return {w(host + (kind == MatrixKind::wcls ? 0 : l * size), size), GgmlType::F32, nullptr};
}

void TransformerRunner::ensure_scratch(int rows, std::size_t probs_floats,
                                       std::size_t stage_floats) {
    const std::size_t d = c_.dim, kv = c_.kv_dim(), h = c_.hidden_dim;
    if (rows > scratch_rows_) {
        // Sized once for a whole context (a batch of several sequences may need more).
        rows = std::max(rows, c_.seq_len);
        scratch_rows_ = rows;
        x_ = DeviceBuffer(be_, rows * d);
        xb_ = DeviceBuffer(be_, rows * d);
        q_ = DeviceBuffer(be_, rows * d);
        k_ = DeviceBuffer(be_, rows * kv);
        v_ = DeviceBuffer(be_, rows * kv);
        att_ = DeviceBuffer(be_, rows * d);
        h1_ = DeviceBuffer(be_, rows * h);
        if (!c_.gpt2()) h3_ = DeviceBuffer(be_, rows * h);  // SwiGLU's up projection
    }
    if (probs_floats > probs_.size())
        probs_ = DeviceBuffer(be_, grown(probs_.size(), probs_floats));
    if (stage_floats > stage_.size())
        stage_ = DeviceBuffer(be_, grown(stage_.size(), stage_floats));
    host_.reserve(be_, stage_.size());
}

void TransformerRunner::gather_rows(DeviceSpan rows, std::size_t at, int layer, int T, int keep) {
    const std::size_t d = c_.dim, n = std::size_t(keep) * d;
    be_.copy_rows(stage_.at(at + layer * n, n), n, rows.at(std::size_t(T - keep) * d, n), n, 1, n);
}

// Sequence i's part of the host copy -> out: logits, attention rows packed without masked cells,
// q and attention output rows, K/V rows.
void TransformerRunner::unpack(const StageLayout& at, int i, int keep, int kv_keep,
                               std::size_t probs_row, const Capture& want,
                               ForwardResult& out) const {
    const float* host = host_.data();
    const std::size_t vocab = c_.vocab_size;
    out.logits.assign(host + i * vocab, host + (i + 1) * vocab);
    if (want.attention)
        for (int l = 0; l < c_.n_layers; ++l)
            for (int h = 0; h < c_.n_heads; ++h)
                for (int r = 0; r < keep; ++r) {
                    auto row = out.attention.row(l, h, r);
                    const std::size_t src =
                        at.probs[i] + ((std::size_t(l) * c_.n_heads + h) * keep + r) * probs_row;
                    std::memcpy(row.data(), host + src, row.size() * sizeof(float));
                }
    if (want.vectors) {
        const std::size_t n = std::size_t(c_.n_layers) * keep * c_.dim;
        out.q_rows.assign(host + at.q[i], host + at.q[i] + n);
        out.attn_out.assign(host + at.attn_out[i], host + at.attn_out[i] + n);
    }
    if (want.kv_rows) {
        const std::size_t n = ConstKvRows{nullptr, c_.n_layers, kv_keep, c_.kv_dim()}.size();
        out.kv_rows_kept = kv_keep;
        out.kv_rows.assign(host + at.kv[i], host + at.kv[i] + n);
    } else {
        out.kv_rows_kept = 0;
        out.kv_rows.clear();
    }
}

// Cache rows first..first+n-1 of every layer: out [n_layers, 2 (K, V), n, kv_dim].
void TransformerRunner::read_rows(const KvCache& cache, int first, int n, std::vector<float>& out) {
    if (first < 0 || n < 0 || first + n > cache.len())
        throw Error("K/V rows " + std::to_string(first) + ".." + std::to_string(first + n - 1) +
                    " are not in the cache (" + std::to_string(cache.len()) + " rows)");
    const std::size_t kv = c_.kv_dim(), block = std::size_t(n) * kv;
    const std::size_t offset = std::size_t(first) * kv, layer = std::size_t(c_.seq_len) * kv;
    const ConstKvRows to{nullptr, c_.n_layers, n, c_.kv_dim()};  // out's layout
    const std::size_t total = to.size();
    out.resize(total);
    if (total == 0) return;
    // Gathered on the device as a step's captures are, then one download.
    ensure_scratch(0, 0, total);
    if (cache.paged()) {
        for (int l = 0; l < c_.n_layers; ++l)
            through_table(cache, l, first, n, stage_.at(to.offset(l, to.K), block),
                          stage_.at(to.offset(l, to.V), block), Way::FromBlocks);
    } else {
        be_.copy_rows(stage_.at(to.offset(0, to.K), 0), to.layer_floats(),
                      cache.k_all().at(offset, 0), layer, c_.n_layers, block);
        be_.copy_rows(stage_.at(to.offset(0, to.V), 0), to.layer_floats(),
                      cache.v_all().at(offset, 0), layer, c_.n_layers, block);
    }
    be_.download(host_.data(), stage_.at(0, total), total);
    std::memcpy(out.data(), host_.data(), total * sizeof(float));
}

void TransformerRunner::through_table(const KvCache& cache, int l, int first, int n,
                                      DeviceSpan rows_k, DeviceSpan rows_v, Way way) {
    const std::size_t kv = c_.kv_dim();
    const KvBlockPool& pool = *cache.pool();
    for_each_block_run(cache.table(), pool.block_size(), first, n, [&](int p, int row, int run) {
        if (row < 0) throw Error("K/V row " + std::to_string(p) + "'s block was let go");
        const std::size_t len = std::size_t(run) * kv, at = std::size_t(p - first) * kv;
        // A quantised pool dequantises as it loads and quantises as it stores.
        if (way == Way::FromBlocks)
            pool.load_rows(l, row, run, rows_k.at(at, len), rows_v.at(at, len));
        else
            pool.store_rows(l, row, run, rows_k.at(at, len), rows_v.at(at, len));
    });
}

void TransformerRunner::forward_batch(std::span<const SeqInput> seqs, const Capture& want,
                                      std::span<ForwardResult> out) {
    const int B = static_cast<int>(seqs.size());
    if (B == 0 || B > max_batch() || static_cast<int>(out.size()) < B)
        throw Error("forward pass with " + std::to_string(B) + " sequences (runner holds " +
                    std::to_string(max_batch()) + ")");
    const Pass p = plan(seqs, want);
    ensure_scratch(p.R, p.probs_floats, p.stage.total);
    for (int i = 0; i < B; ++i) {
        out[i].head_outputs.clear();
        out[i].ops.clear();
        if (want.attention)
            out[i].attention.resize(c_.n_layers, c_.n_heads, p.keep[i],
                                    p.pos0[i] + p.T[i] - p.keep[i],
                                    mask_ == AttentionMask::Bidirectional);
        if (!want.vectors) {
            out[i].q_rows.clear();
            out[i].attn_out.clear();
        }
    }
    log_ = want.op_log ? &out[0].ops : nullptr;
    if (log_) log_->clear();
    log_seq_.clear();
    if (p.graph)
        run_graph(seqs, p, want);
    else if (p.fused)
        run_fused(seqs, p, want);
    else if (c_.gpt2())
        run_gpt2_layers(seqs, p, want);
    else
        run_layers(seqs, p, want);
    finish(seqs, p, want, out);
    const PassPath path = p.fused ? PassPath::Fused : p.graph ? PassPath::Graph : PassPath::PerOp;
    for (int i = 0; i < B; ++i) out[i].path = path;
}

TransformerRunner::Pass TransformerRunner::plan(std::span<const SeqInput> seqs,
                                                const Capture& want) {
    Pass p;
    p.B = static_cast<int>(seqs.size());
    p.first.resize(p.B), p.T.resize(p.B), p.pos0.resize(p.B), p.keep.resize(p.B);
    p.kv_keep.resize(p.B);
    all_tokens_.clear();
    all_positions_.clear();
    for (int i = 0; i < p.B; ++i) {
        const SeqInput& s = seqs[i];
        if (s.slot < 0 || s.slot >= max_batch())
            throw Error("no KV cache slot " + std::to_string(s.slot));
        for (int j = 0; j < i; ++j)
            if (seqs[j].slot == s.slot) throw Error("two sequences share a KV cache slot");
        const int T = static_cast<int>(s.tokens.size()), pos0 = caches_[s.slot]->len();
        if (T == 0) throw Error("forward pass with no tokens");
        // A bounded paged cache sees at most its sinks, its window and the pass: its positions
        // may run past the context where they are RoPE's (computed for any position).
        const bool unbounded = paged_ && window_ > 0 && !c_.gpt2() && T <= c_.seq_len;
        if (pos0 + T > c_.seq_len && !unbounded)
            throw Error("context is full: " + std::to_string(pos0 + T) +
                        " positions needed, the model's context is " + std::to_string(c_.seq_len));
        const KvCache& cache = *caches_[s.slot];
        if (window_ > 0 && want.attention)
            throw Error("attention weights are not captured under a cache window");
        if (cache.paged() &&
            std::size_t(pos0 + T) > cache.table().size() * cache.pool()->block_size())
            throw Error("slot " + std::to_string(s.slot) + "'s block table holds " +
                        std::to_string(cache.table().size()) + " blocks, too few for " +
                        std::to_string(pos0 + T) + " rows");
        for (int t : s.tokens)
            if (t < 0 || t >= c_.vocab_size)
                throw Error("token id " + std::to_string(t) + " is outside the vocabulary (" +
                            std::to_string(c_.vocab_size) + ")");
        p.T[i] = T;
        p.pos0[i] = pos0;
        p.first[i] = p.R;
        p.R += T;
        p.keep[i] = want.last_rows < 0 ? T : std::min(want.last_rows, T);
        p.kv_keep[i] = want.all_kv_rows ? T : p.keep[i];
        if (want.attention && p.keep[i] < T)
            p.probs_floats = std::max(p.probs_floats, std::size_t(c_.n_heads) * T * (pos0 + T));
        all_tokens_.insert(all_tokens_.end(), s.tokens.begin(), s.tokens.end());
        for (int t = 0; t < T; ++t) all_positions_.push_back(pos0 + t);
    }
    const StepGraphs* graphs = be_.graphs();
    // Op by op, each op timed: the teaching path. Otherwise a decode step (one row a sequence)
    // runs through the fused kernels (one sequence) and/or as one graph. Not for GPT-2: a
    // recorded step reads its token from the device, and its position row would have to be read
    // the same way (not done: GPT-2 decodes op by op). Causal attention only (a decode row sees
    // every key either way, but a bidirectional session runs uncached, never one row).
    const bool per_op = want.op_log && want.time_each_op;
    // A paged pass runs op by op: its rows move through block tables a recording cannot follow.
    p.graph = graphs && graphs->graphs_on() && !per_op && p.B <= StepGraphs::kMaxSequences &&
              p.R == p.B && !c_.gpt2() && mask_ == AttentionMask::Causal && !paged_;
    p.fused = !per_op && want.fused && p.B == 1 && p.R == 1 && fused_fits() &&
              mask_ == AttentionMask::Causal && !paged_;
    p.capacity = c_.seq_len;
    // The stage: [logits: B x vocab | per sequence: attention, q, attention output, K/V rows].
    const std::size_t L = c_.n_layers, H = c_.n_heads, d = c_.dim, kv = c_.kv_dim();
    StageLayout& st = p.stage;
    st.total = p.B * std::size_t(c_.vocab_size);
    for (int i = 0; i < p.B; ++i) {
        st.probs.push_back(st.total);
        if (want.attention) st.total += L * H * p.keep[i] * p.probs_row(i);
        st.q.push_back(st.total);
        if (want.vectors) st.total += L * p.keep[i] * d;
        st.attn_out.push_back(st.total);
        if (want.vectors) st.total += L * p.keep[i] * d;
        st.kv.push_back(st.total);
        if (want.kv_rows) st.total += ConstKvRows{nullptr, int(L), p.kv_keep[i], int(kv)}.size();
    }
    return p;
}

void TransformerRunner::run_layers(std::span<const SeqInput> seqs, const Pass& p,
                                   const Capture& want) {
    using K = OpKind;
    const int R = p.R, D = c_.dim, KV = c_.kv_dim(), HID = c_.hidden_dim, B = p.B;
    const std::size_t d = D, kv = KV, hid = HID, vocab = c_.vocab_size;
    const LlamaWeights& W = *W_;
    const CompactWeights& C = C_;
    // The pass's scratch rows: x, xb, q, att: [R, dim]; k, v: [R, kv_dim]; h1, h3: [R, hidden]
    const DeviceSpan x = x_.span(), xb = xb_.span(), q = q_.span(), k = k_.span(), v = v_.span(),
                     att = att_.span(), h1 = h1_.span(), h3 = h3_.span();

    embed(R);  // x: [R, dim], the residual stream of every row in this pass (one row per token)
    for (int l = 0; l < c_.n_layers; ++l) {
        // Attention block. xb = rmsnorm(x): [R, dim]
        rmsnorm({K::RmsNorm, l}, xb, x, W.norm_att + l * d, R);
        // q = xb wq: [R, dim] (n_heads x head_dim); k, v: [R, kv_dim] (n_kv_heads x head_dim)
        matmul({K::QProj, l}, q, xb, W.wq + l * d * d, at(C.wq, l), R, D, D);
        matmul({K::KProj, l}, k, xb, W.wk + l * kv * d, at(C.wk, l), R, D, KV);
        matmul({K::VProj, l}, v, xb, W.wv + l * kv * d, at(C.wv, l), R, D, KV);
        if (c_.qkv_bias) {  // Qwen2: q += bq, k += bk, v += bv, every row
            add_bias({K::QBias, l}, q, W.bq + l * d, R, D);
            add_bias({K::KBias, l}, k, W.bk + l * kv, R, KV);
            add_bias({K::VBias, l}, v, W.bv + l * kv, R, KV);
        }
        // RoPE, the cache append and attention, per sequence: att: [R, dim]
        attend_all(l, seqs, p, want);
        // x += att wo: [R, dim]
        matmul({K::OutProj, l}, xb, att, W.wo + l * d * d, at(C.wo, l), R, D, D);
        add({K::Residual, l}, x, xb, R);

        // Feed-forward block: x += w2(silu(w1 xb) * w3 xb); h1, h3: [R, hidden]
        rmsnorm({K::FfnNorm, l}, xb, x, W.norm_ffn + l * d, R);
        matmul({K::FfnGate, l}, h1, xb, W.w1 + l * hid * d, at(C.w1, l), R, D, HID);
        matmul({K::FfnUp, l}, h3, xb, W.w3 + l * hid * d, at(C.w3, l), R, D, HID);
        swiglu({K::SwiGLU, l}, h1, h3, R);
        matmul({K::FfnDown, l}, xb, h1, W.w2 + l * d * hid, at(C.w2, l), R, HID, D);
        add({K::FfnResidual, l}, x, xb, R);
    }
    // Only each sequence's last position needs a next-token distribution: those B rows are
    // normalised into xb[0..B) and go through the classifier together. logits: [B, vocab]
    for (int i = 0; i < B; ++i)
        rmsnorm({K::FinalNorm, -1}, xb_.at(i * d, d), x_.at((p.first[i] + p.T[i] - 1) * d, d),
                W.norm_final, 1);
    matmul({K::Classifier, -1}, stage_.at(0, B * vocab), xb_.at(0, B * d), W.wcls, C.wcls, B, D,
           c_.vocab_size);
}

void TransformerRunner::run_gpt2_layers(std::span<const SeqInput> seqs, const Pass& p,
                                        const Capture& want) {
    using K = OpKind;
    const int R = p.R, D = c_.dim, HID = c_.hidden_dim, B = p.B;
    const std::size_t d = D, hid = HID, vocab = c_.vocab_size;
    const LlamaWeights& W = *W_;
    // The pass's scratch rows: x, xb, q, k, v, att: [R, dim]; h1: [R, hidden]
    const DeviceSpan x = x_.span(), xb = xb_.span(), q = q_.span(), k = k_.span(), v = v_.span(),
                     att = att_.span(), h1 = h1_.span();
    // The dense layers of GPT-2: out = in W^T + b, every row.   in: [R, n], out: [R, m]
    auto linear = [&](At at, K bias, DeviceSpan out, DeviceSpan in, const float* wt, const float* b,
                      int n, int m) {
        matmul(at, out, in, wt, CompactMatrix{}, R, n, m);
        add_bias({bias, at.layer}, out, b, R, m);
    };

    // x = wte[token] + wpe[position]: [R, dim]; the position is in x from here on (no RoPE).
    lookup({K::Embedding, -1}, x, W.token_embedding, c_.vocab_size, all_tokens_.data(), R);
    lookup({K::PosEmbedding, -1}, xb, W.pos_embedding, c_.n_positions, all_positions_.data(), R);
    add({K::PosAdd, -1}, x, xb, R);
    for (int l = 0; l < c_.n_layers; ++l) {
        // Attention block. xb = layernorm(x) (ln_1): [R, dim]
        layernorm({K::LayerNorm, l}, xb, x, W.norm_att + l * d, W.norm_att_bias + l * d, R);
        // q, k, v = xb wq + bq, ...: [R, dim] each (c_attn, split into three on load)
        linear({K::QProj, l}, K::QBias, q, xb, W.wq + l * d * d, W.bq + l * d, D, D);
        linear({K::KProj, l}, K::KBias, k, xb, W.wk + l * d * d, W.bk + l * d, D, D);
        linear({K::VProj, l}, K::VBias, v, xb, W.wv + l * d * d, W.bv + l * d, D, D);
        // The cache append and attention, per sequence (no RoPE): att: [R, dim]
        attend_all(l, seqs, p, want);
        // x += att wo + bo (attn.c_proj): [R, dim]
        linear({K::OutProj, l}, K::OutBias, xb, att, W.wo + l * d * d, W.bo + l * d, D, D);
        add({K::Residual, l}, x, xb, R);

        // MLP block: x += gelu(layernorm(x) w1 + b1) w2 + b2; h1: [R, hidden]
        layernorm({K::FfnLayerNorm, l}, xb, x, W.norm_ffn + l * d, W.norm_ffn_bias + l * d, R);
        linear({K::MlpUp, l}, K::MlpUpBias, h1, xb, W.w1 + l * hid * d, W.b1 + l * hid, D, HID);
        gelu({K::Gelu, l}, h1, R);
        linear({K::MlpDown, l}, K::MlpDownBias, xb, h1, W.w2 + l * d * hid, W.b2 + l * d, HID, D);
        add({K::FfnResidual, l}, x, xb, R);
    }
    // Each sequence's last row, layernorm(x) (ln_f), then the classifier together. [B, vocab]
    for (int i = 0; i < B; ++i)
        layernorm({K::FinalLayerNorm, -1}, xb_.at(i * d, d),
                  x_.at((p.first[i] + p.T[i] - 1) * d, d), W.norm_final, W.norm_final_bias, 1);
    matmul({K::Classifier, -1}, stage_.at(0, B * vocab), xb_.at(0, B * d), W.wcls, CompactMatrix{},
           B, D, c_.vocab_size);
}

void TransformerRunner::run_graph(std::span<const SeqInput> seqs, const Pass& p,
                                  const Capture& want) {
    StepGraphs& g = *be_.graphs();
    g.set_step(all_tokens_.data(), p.pos0.data(), p.B);
    std::vector<std::size_t> key{std::size_t(p.B),
                                 want.attention,
                                 want.vectors,
                                 want.kv_rows,
                                 want.op_log,
                                 p.fused,
                                 reinterpret_cast<std::size_t>(stage_.span().data),
                                 stage_.size(),
                                 reinterpret_cast<std::size_t>(x_.span().data),
                                 p.stage.total};
    for (int i = 0; i < p.B; ++i)
        key.insert(key.end(), {std::size_t(seqs[i].slot), std::size_t(p.keep[i]),
                               std::size_t(p.kv_keep[i]), p.probs_row(i)});
    if (graph_ != 0 && key == graph_key_ && g.replay(graph_)) {
        replay_log(p);
        return;
    }
    if (graph_ != 0) g.drop(graph_);
    graph_ = 0;
    g.begin_capture();
    try {
        if (p.fused)
            run_fused(seqs, p, want);
        else
            run_layers(seqs, p, want);
    } catch (...) {
        g.abort_capture();
        throw;
    }
    graph_ = g.end_capture();
    graph_key_ = std::move(key);
    if (log_) {
        graph_log_ = *log_;
        graph_log_seq_ = log_seq_;
    }
    if (!g.replay(graph_)) throw Error("a decode graph just recorded could not be launched");
}

void TransformerRunner::replay_log(const Pass& p) {
    if (!log_) return;
    *log_ = graph_log_;
    for (std::size_t k = 0; k < log_->ops.size(); ++k) {
        const int i = graph_log_seq_[k];
        if (i < 0) continue;
        OpRecord& r = log_->ops[k];
        const OpCount n = count_op(r.kind, c_, r.in.rows, p.pos0[i]);
        r.in = n.in, r.out = n.out, r.flops = n.flops;
    }
}

void TransformerRunner::run_fused(std::span<const SeqInput> seqs, const Pass& p,
                                  const Capture& want) {
    const std::size_t d = c_.dim, L = c_.n_layers, H = c_.n_heads, kv = c_.kv_dim();
    const StageLayout& st = p.stage;
    const std::size_t stride = p.probs_row(0);
    if (p.graph) be_.graphs()->position_of(0, static_cast<int>(stride));
    FusedDecodeStep s{c_,
                      *W_,
                      [&](const float* host, std::size_t n) { return w(host, n); },
                      [&](MatrixKind kind, int l) { return fused_matrix(kind, l); },
                      *caches_[seqs[0].slot],
                      inv_freq_.span(),
                      all_tokens_.data(),
                      p.pos0[0],
                      x_.at(0, d),
                      q_.at(0, d),
                      att_.at(0, d),
                      h1_.at(0, c_.hidden_dim),
                      stage_.at(0, c_.vocab_size),
                      {},
                      0,
                      {},
                      {},
                      {},
                      nullptr};
    // The captures of the one kept row, straight from the kernels into the stage.
    if (want.attention && p.keep[0] == 1) {
        s.probs = stage_.at(st.probs[0], L * H * stride);
        s.probs_stride = stride;
    }
    if (want.vectors && p.keep[0] == 1) {
        s.q_keep = stage_.at(st.q[0], L * d);
        s.out_keep = stage_.at(st.attn_out[0], L * d);
    }
    if (want.kv_rows && p.kv_keep[0] == 1)
        s.kv_keep = stage_.at(st.kv[0], ConstKvRows{nullptr, int(L), 1, int(kv)}.size());
    s.log = log_;
    run_fused_decode(*be_.fused(), s);
    if (log_) log_seq_.assign(log_->ops.size(), 0);  // every op at sequence 0's position
}

TransformerRunner::SeqRows TransformerRunner::rows_of(const Pass& p, int i) const {
    const std::size_t d = c_.dim, kv = c_.kv_dim(), first = p.first[i], T = p.T[i];
    return {q_.at(first * d, T * d), k_.at(first * kv, T * kv), v_.at(first * kv, T * kv),
            att_.at(first * d, T * d)};
}

void TransformerRunner::rope_rows(int l, const Pass& p, int i, const SeqRows& r) {
    if (c_.gpt2()) return;  // GPT-2's positions were added to x at the embedding instead
    op(OpKind::Rope, l, p.T[i], p.pos0[i]);
    be_.rope(r.q, r.k, p.T[i], p.pos0[i], c_.dim, c_.kv_dim(), c_.head_dim(), inv_freq_.span());
}

void TransformerRunner::keep_new_kv(int l, const Pass& p, int i, const Capture& want,
                                    const SeqRows& r) {
    if (!want.kv_rows || p.kv_keep[i] == 0) return;
    const ConstKvRows kept_rows{nullptr, c_.n_layers, p.kv_keep[i], c_.kv_dim()};
    const std::size_t kv = c_.kv_dim(), n = std::size_t(p.kv_keep[i]) * kv;
    const std::size_t from = std::size_t(p.T[i]) * kv - n, at = p.stage.kv[i];
    be_.copy_rows(stage_.at(at + kept_rows.offset(l, kept_rows.K), n), n, r.k.at(from, n), n, 1, n);
    be_.copy_rows(stage_.at(at + kept_rows.offset(l, kept_rows.V), n), n, r.v.at(from, n), n, 1, n);
}

DeviceSpan TransformerRunner::probs_target(int l, const Pass& p, int i, const Capture& want) const {
    // probs: [H, T, n_keys]. Every row kept (prefill, decode): written straight into the stage;
    // else into scratch, and the kept rows gathered into the stage by one copy (keep_attention).
    // A graph pass that keeps no row writes none: its scratch would be position-sized.
    const int T = p.T[i], keep = p.keep[i];
    if (!want.attention || (p.graph && keep < T)) return {};
    if (keep < T) return probs_.span();
    const std::size_t layer_probs = std::size_t(c_.n_heads) * keep * p.probs_row(i);
    return stage_.at(p.stage.probs[i] + l * layer_probs, layer_probs);
}

void TransformerRunner::keep_attention(int l, const Pass& p, int i, const Capture& want,
                                       const SeqRows& r) {
    const int T = p.T[i], keep = p.keep[i], H = c_.n_heads;
    if (want.attention && keep < T) {
        const std::size_t n_keys = p.pos0[i] + T, layer_probs = H * keep * p.probs_row(i);
        const DeviceSpan kept = stage_.at(p.stage.probs[i] + l * layer_probs, layer_probs);
        be_.copy_rows(kept, keep * n_keys, probs_.at((T - keep) * n_keys, 0), T * n_keys, H,
                      keep * n_keys);
    }
    if (want.vectors) {
        // q as attention read it (after RoPE), the output before wo mixes the heads.
        gather_rows(r.q, p.stage.q[i], l, T, keep);
        gather_rows(r.att, p.stage.attn_out[i], l, T, keep);
    }
}

void TransformerRunner::attend_all(int l, std::span<const SeqInput> seqs, const Pass& p,
                                   const Capture& want) {
    if (!paged_) {
        for (int i = 0; i < p.B; ++i) attend(l, *caches_[seqs[i].slot], p, i, want);
        return;
    }
    for (int i = 0; i < p.B; ++i) store_paged(l, *caches_[seqs[i].slot], p, i, want);
    for (int i = 0; i < p.B; ++i) attend_paged(l, *caches_[seqs[i].slot], p, i, want);
}

// Logs the ops below as counted at sequence i's position, until the scope ends.
struct CountedAt {
    int& seq;
    CountedAt(int& s, int i) : seq(s) { seq = i; }
    ~CountedAt() { seq = -1; }
};

void TransformerRunner::attend(int l, KvCache& cache, const Pass& p, int i, const Capture& want) {
    const CountedAt counted(op_seq_, i);
    const int T = p.T[i], pos0 = p.pos0[i];
    const SeqRows r = rows_of(p, i);  // at positions pos0..pos0+T-1
    // Under a graph capture the next ops read this sequence's position from the device; the
    // recording serves up to probs_row(i) keys.
    if (p.graph) be_.graphs()->position_of(i, static_cast<int>(p.probs_row(i)));
    rope_rows(l, p, i, r);
    // The cache grows by T rows; attention then reads rows 0..pos0+T-1 of it.
    op(OpKind::KvAppend, l, T, pos0);
    be_.kv_append(cache.k(l), cache.v(l), r.k, r.v, pos0, T, c_.kv_dim());
    // (finish() reads the kept rows out of the cache, at a position-dependent place a recorded
    // copy cannot follow: a graph keeps them here.)
    if (p.graph) keep_new_kv(l, p, i, want, r);
    // One fused kernel: scores, softmax and weights . V share its measured time.
    op(OpKind::Scores, l, T, pos0);
    op(OpKind::Softmax, l, T, pos0, false);
    op(OpKind::WeightedSum, l, T, pos0, false);
    be_.attention(r.att, r.q, cache.k(l), cache.v(l), probs_target(l, p, i, want), T, pos0,
                  c_.n_heads, c_.n_kv_heads, c_.head_dim(), mask_ == AttentionMask::Causal);
    keep_attention(l, p, i, want, r);
}

void TransformerRunner::store_paged(int l, KvCache& cache, const Pass& p, int i,
                                    const Capture& want) {
    const CountedAt counted(op_seq_, i);
    const SeqRows r = rows_of(p, i);
    rope_rows(l, p, i, r);
    // The new rows into their blocks (a quantised pool quantises them as it stores).
    op(OpKind::KvAppend, l, p.T[i], p.pos0[i]);
    through_table(cache, l, p.pos0[i], p.T[i], r.k, r.v, Way::ToBlocks);
    keep_new_kv(l, p, i, want, r);
}

TransformerRunner::SeenKeys TransformerRunner::seen_keys(int pos0, int T) const {
    // The cached rows the window keeps (all of them without one), then the pass's own.
    const CachedRowsSeen c =
        cached_rows_seen(KeyMask{AttentionMask::Causal, sinks_, window_}, pos0);
    SeenKeys k;
    k.sinks = c.sinks_end;
    k.from = c.from;
    k.count = k.sinks + (pos0 + T - k.from);
    return k;
}

int TransformerRunner::sink_shift(const SeenKeys& keys) const {
    // StreamingLLM numbers the cache's rows 0, 1, ...: the sinks, then the window's rows right
    // after them. Relative to the window (RoPE sees only differences), that puts the sinks just
    // before `from` instead of at 0.
    if (window_ == 0 || sink_positions_ != SinkPositions::Cache || keys.sinks == 0) return 0;
    return keys.from - keys.sinks;
}

void TransformerRunner::shift_keys(int l, DeviceSpan k, int rows, int shift) {
    const std::size_t kv = c_.kv_dim();
    if (shift_q_.size() < std::size_t(c_.dim)) shift_q_ = DeviceBuffer(be_, c_.dim);
    op(OpKind::Rope, l, rows, shift);
    for (int r = 0; r < rows; ++r)
        be_.rope(shift_q_.span(), k.at(r * kv, kv), 1, shift, c_.dim, c_.kv_dim(), c_.head_dim(),
                 inv_freq_.span());
}

void TransformerRunner::attend_paged(int l, KvCache& cache, const Pass& p, int i,
                                     const Capture& want) {
    const CountedAt counted(op_seq_, i);
    const int T = p.T[i], pos0 = p.pos0[i];
    const std::size_t kv = c_.kv_dim();
    const SeqRows r = rows_of(p, i);
    const KvBlockPool& pool = *cache.pool();
    // Every key this pass sees is in the blocks now, the pass's own rows too (store_paged), so
    // they are read as the cache holds them whichever pass computed them.
    const SeenKeys keys = seen_keys(pos0, T);
    const int shift = sink_shift(keys), bs = pool.block_size();
    op(OpKind::Scores, l, T, pos0);
    op(OpKind::Softmax, l, T, pos0, false);
    op(OpKind::WeightedSum, l, T, pos0, false);
    const int seen = keys.count - T;  // keys before the pass's own
    const bool causal = mask_ == AttentionMask::Causal;
    if (!pool.quantised() && be_.attends_rows_in_place()) {
        // Read in place: each key's row where its block holds it (the sinks moved forward from
        // a copy), the table walked a block at a time.
        key_k_.resize(keys.count);
        key_v_.resize(keys.count);
        const float *pk = pool.k(l).data, *pv = pool.v(l).data;
        int key = 0;
        const auto name_rows = [&](int position, int row, int run) {
            if (row < 0) throw Error("K/V row " + std::to_string(position) + "'s block was let go");
            for (int j = 0; j < run; ++j, ++key) {
                key_k_[key] = pk + std::size_t(row + j) * kv;
                key_v_[key] = pv + std::size_t(row + j) * kv;
            }
        };
        for_each_block_run(cache.table(), bs, 0, keys.sinks, name_rows);
        for_each_block_run(cache.table(), bs, keys.from, keys.count - keys.sinks, name_rows);
        if (shift > 0) {
            if (sink_k_.size() < keys.sinks * kv) sink_k_ = DeviceBuffer(be_, keys.sinks * kv);
            int at = 0;
            for_each_block_run(cache.table(), bs, 0, keys.sinks, [&](int, int row, int run) {
                const std::size_t n = std::size_t(run) * kv;
                be_.copy_rows(sink_k_.at(at * kv, n), n, pool.k(l).at(row * kv, n), n, 1, n);
                at += run;
            });
            for (int s = 0; s < keys.sinks; ++s) key_k_[s] = sink_k_.at(s * kv, kv).data;
            shift_keys(l, sink_k_.span(), keys.sinks, shift);
        }
        be_.attention_rows(r.att, r.q, key_k_.data(), key_v_.data(), probs_target(l, p, i, want), T,
                           seen, c_.n_heads, c_.n_kv_heads, c_.head_dim(), causal);
    } else {
        // Gathered into contiguous rows (dequantised from a quantised pool) through the table.
        const std::size_t need = std::size_t(keys.count) * kv;
        if (gather_k_.size() < need) {
            gather_k_ = DeviceBuffer(be_, grown(gather_k_.size(), need));
            gather_v_ = DeviceBuffer(be_, gather_k_.size());
        }
        through_table(cache, l, 0, keys.sinks, gather_k_.span(), gather_v_.span(), Way::FromBlocks);
        const std::size_t at = std::size_t(keys.sinks) * kv, rest = need - at;
        through_table(cache, l, keys.from, keys.count - keys.sinks, gather_k_.at(at, rest),
                      gather_v_.at(at, rest), Way::FromBlocks);
        if (shift > 0) shift_keys(l, gather_k_.span(), keys.sinks, shift);
        be_.attention(r.att, r.q, gather_k_.span(), gather_v_.span(), probs_target(l, p, i, want),
                      T, seen, c_.n_heads, c_.n_kv_heads, c_.head_dim(), causal);
    }
    keep_attention(l, p, i, want, r);
}

void TransformerRunner::finish(std::span<const SeqInput> seqs, const Pass& p, const Capture& want,
                               std::span<ForwardResult> out) {
    const std::size_t L = c_.n_layers, kv = c_.kv_dim();
    for (int i = 0; i < p.B; ++i) {
        KvCache& cache = *caches_[seqs[i].slot];
        cache.set_len(p.pos0[i] + p.T[i]);
        // graph and paged: gathered in attend; fused: stored by the kernels
        if (!want.kv_rows || p.kv_keep[i] == 0 || p.graph || p.fused || cache.paged()) continue;
        // The last kv_keep rows of every layer's K, then V: [L, 2, kv_keep, kv_dim] in the stage.
        const ConstKvRows to{nullptr, int(L), p.kv_keep[i], int(kv)};
        const std::size_t block = std::size_t(p.kv_keep[i]) * kv,
                          layer = std::size_t(c_.seq_len) * kv;
        const std::size_t kept_from = std::size_t(cache.len() - p.kv_keep[i]) * kv,
                          at = p.stage.kv[i];
        be_.copy_rows(stage_.at(at + to.offset(0, to.K), 0), to.layer_floats(),
                      cache.k_all().at(kept_from, 0), layer, L, block);
        be_.copy_rows(stage_.at(at + to.offset(0, to.V), 0), to.layer_floats(),
                      cache.v_all().at(kept_from, 0), layer, L, block);
    }
    be_.download(host_.data(), stage_.at(0, p.stage.total), p.stage.total);
    for (int i = 0; i < p.B; ++i)
        unpack(p.stage, i, p.keep[i], p.kv_keep[i], p.probs_row(i), want, out[i]);
}

}  // namespace

const char* pass_path_name(PassPath p) {
    switch (p) {
        case PassPath::PerOp:
            return "op by op";
        case PassPath::Graph:
            return "graph";
        case PassPath::Fused:
            return "fused";
    }
    return "?";
}

TransformerModel::TransformerModel(Checkpoint ck, BpeTokenizer tok, std::string name)
    : TransformerModel(std::move(ck), std::make_unique<BpeTokenizer>(std::move(tok)),
                       {BpeTokenizer::kBos}, std::move(name),
                       "llama2.c checkpoint, float32, mapped read-only") {}

TransformerModel::TransformerModel(Checkpoint ck, std::unique_ptr<const Tokenizer> tok,
                                   std::vector<int> stop, std::string name, std::string format)
    : ck_(std::move(ck)),
      tok_(std::move(tok)),
      stop_(std::move(stop)),
      name_(std::move(name)),
      format_(std::move(format)) {
    // A checkpoint's matrices converted on load (a GGUF's format says what it did itself).
    if (ck_.compact.held() && format_.find("matrices kept") == std::string::npos)
        format_ += "; matrices converted on load to " + ck_.compact.types() + " (" +
                   std::to_string(ck_.compact.bytes / 1000) + " kB)";
}

std::unique_ptr<TransformerModel> TransformerModel::with_weights(Checkpoint ck,
                                                                 std::string format) const {
    auto m = std::unique_ptr<TransformerModel>(new TransformerModel(*this));
    m->ck_ = std::move(ck);
    m->format_ = std::move(format);
    return m;
}

std::unique_ptr<Runner> TransformerModel::make_runner(Backend& backend) const {
    return std::make_unique<TransformerRunner>(*this, backend, 1);
}

std::unique_ptr<BatchRunner> TransformerModel::make_batch_runner(Backend& backend,
                                                                 int max_batch) const {
    if (max_batch < 1 || max_batch > 64)
        throw Error("batch size " + std::to_string(max_batch) + " (must be 1..64)");
    return std::make_unique<TransformerRunner>(*this, backend, max_batch);
}

std::unique_ptr<BatchRunner> TransformerModel::make_paged_runner(Backend& backend, int max_batch,
                                                                 const KvBlockPool& pool) const {
    if (max_batch < 1 || max_batch > 64)
        throw Error("batch size " + std::to_string(max_batch) + " (must be 1..64)");
    return std::make_unique<TransformerRunner>(*this, backend, max_batch, &pool);
}

}  // namespace kvs
