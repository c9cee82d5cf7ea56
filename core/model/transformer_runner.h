#pragma once
// TransformerModel's runner: the forward pass of Llama, Qwen2 and GPT-2 over Backend ops, written
// once for every backend, and what stands around it, each in a file of its own:
//   transformer_runner.cpp           the pass itself (plan, the layers, attention as run.c's)
//   transformer_runner_paged.cpp     a paged cache's rows through its block table, a window's
//   transformer_runner_captures.cpp  what a step returns, gathered in one capture buffer
//   transformer_runner_graph.cpp     a decode step recorded as one graph, or the fused kernels
//   transformer_runner_weights.cpp   compact matrices adopted where the backend reads them
// Internal to core/model: these files and transformer_model.cpp (which makes runners) only.
#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "core/model/backend.h"
#include "core/model/fused_decode.h"
#include "core/model/fused_ops.h"
#include "core/model/kv_blocks.h"
#include "core/model/kv_rows.h"
#include "core/model/projection_rows.h"
#include "core/model/rope_frequencies.h"
#include "core/model/step_graphs.h"
#include "core/model/transformer_model.h"
#include "core/util/error.h"

namespace kvs {

// Floats between a recorded decode pass's probs rows for n_keys keys: a power of two from 64 up
// (at most the capacity), so a graph is recorded again only when the keys outgrow it, and what a
// step downloads is at most about twice the keys, not the capacity.
inline std::size_t probs_bucket(int n_keys, int capacity) {
    std::size_t b = 64;
    while (b < std::size_t(n_keys)) b *= 2;
    return std::min(b, std::size_t(capacity));
}

// Sequences of a Llama model on a backend: the weights uploaded once, one KV cache per slot
// (contiguous, or paged: the slots' rows in a pool's blocks), scratch sized for the largest pass
// so far. Runner is the one-sequence view (slot 0).
class TransformerRunner final : public Runner, public BatchRunner {
  public:
    // The weights adopted by the backend (compact where it reads them), RoPE's frequencies, and
    // `slots` KV caches: contiguous, or paged in `pool`'s blocks.
    TransformerRunner(const TransformerModel& m, Backend& be, int slots,
                      const KvBlockPool* pool = nullptr);
    ~TransformerRunner() override;
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
        return g && g->graphs_on() && !config_.gpt2();  // plan() records GPT-2 steps never
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
        if (config_.gpt2() && window > 0 && sinks > 0 && positions == SinkPositions::Cache)
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
        return weights_.at(static_cast<std::size_t>(host - float_weights_->all.data()), n);
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
        const CompactMatrix& e = device_compact_.embedding;
        if (compact_ && e.data)
            be_.embed_compact(x_.span(), e.type, e.data, all_tokens_.data(), R, config_.dim);
        else
            be_.embed(
                x_.span(),
                w(float_weights_->token_embedding, std::size_t(config_.vocab_size) * config_.dim),
                all_tokens_.data(), R, config_.dim);
    }
    // The model's float32 weights with every compact matrix (and table) dequantised, for a
    // backend that does not read their types (which copies them once, as a float32 model's).
    void expand(const TransformerModel& m) {
        expanded_ = expand_to_float32(m.config(), m.weights(), m.compact());
        float_weights_ = &expanded_;
    }
    // Layer l's matrix of a kind, compact (the backend's copy): none when the model keeps
    // float32 only.
    static CompactMatrix at(const std::vector<CompactMatrix>& list, int l) {
        return list.empty() ? CompactMatrix{} : list[l];
    }
    // The model's compact matrices as the backend reads them (Backend::adopt_compact):
    // device_compact_.
    void adopt_compact(const CompactWeights& cw);
    // Whether a decode step of this model may run through the backend's fused kernels.
    bool fused_fits() const;
    // A matrix of a kind for the fused kernels: its compact copy, or its floats.
    FusedMatrix fused_matrix(MatrixKind kind, int layer) const;
    // Where one pass's results sit, in floats, in the device capture buffer and in its host copy:
    // [logits: B x vocab | per sequence: attention [L, H, keep, n_keys], q and attention output
    // [L, keep, dim] each, K/V rows [L, 2, kv_keep, kv_dim], projections [L, keep, 3 dim + 3
    // kv_dim]]. Everything a step returns is gathered there on the device and comes back in one
    // download (one device-to-host copy, one stream sync per step on a GPU).
    struct CaptureLayout {
        std::vector<std::size_t> probs, q, attn_out, kv, proj;  // per sequence: its regions
        std::size_t total = 0;
        bool projections = false;  // the pass keeps them (asked for, and not fused)
    };
    // One pass's bookkeeping, beside the forward pass rather than inside it: sequence i's T[i]
    // tokens are rows [first[i], first[i] + T[i]) of the stacked activations, at positions
    // pos0[i].. of its cache; the captures return its last keep[i] rows (kv_keep[i] K/V rows).
    struct Pass {
        int B = 0, R = 0;  // sequences, rows in all
        std::vector<int> first, T, pos0, keep, kv_keep;
        std::size_t probs_floats = 0;  // scratch for a sequence whose kept rows are fewer than T
        // Through a CUDA Graph (core/model/step_graphs.h): every sequence one row (decode), per-op
        // timing off, a backend with graphs on. Its probs rows in the capture buffer are then
        // probs_bucket(n_keys) floats apart: nothing in the capture buffer moves with the position
        // until the keys outgrow the bucket, when the graph is recorded again.
        bool graph = false;
        // Through the backend's fused decode kernels (core/model/fused_ops.h): one sequence, one
        // row, per-op timing off; recorded into the graph when `graph` is set too.
        bool fused = false;
        std::size_t probs_row(int i) const {
            return graph ? probs_bucket(pos0[i] + T[i], capacity) : pos0[i] + T[i];
        }
        int capacity = 0;
        CaptureLayout captures;
    };
    // Checks the inputs, lays out the pass and stacks the tokens into all_tokens_.
    Pass plan(std::span<const SeqInput> seqs, const Capture& want);
    // The forward pass itself, run.c's shape: every row through every layer, logits of each
    // sequence's last row into the capture buffer.
    void run_layers(std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // GPT-2's forward pass, the same ops in its design (ModelConfig::gpt2()).
    void run_gpt2_layers(std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // The same pass as one graph launch: the step's token ids and positions to the device, the
    // graph replayed, recorded first (run_layers or run_fused under capture) when there is none
    // that fits.
    void run_graph(std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // One sequence's decode step in the backend's fused kernels (core/model/fused_decode.h), its
    // captures written by the kernels straight into the capture buffer.
    void run_fused(std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // Layer l's attention for every sequence of the pass: attend() each on a contiguous cache;
    // on a paged one, first every sequence's new rows into their blocks (store_paged), then each
    // one's attention (attend_paged), so that a sequence reading blocks another computes in this
    // same pass (a prefix found in the cache as it is computed) reads them written.
    void attend_all(int l, std::span<const SeqInput> seqs, const Pass& p, const Capture& want);
    // Layer l's attention for sequence i alone: RoPE at its positions, its cache, its captures.
    void attend(int l, KvCache& cache, const Pass& p, int i, const Capture& want);
    // Sequence i's kept rows of layer l into its projection block in the capture buffer
    // (core/model/projection_rows.h): the layer's input, the norm's output, and q, k, v before
    // RoPE (`rotated` false: x_, xb_, q_, k_, v_ as rope_rows finds them), or k after it (true).
    void capture_projections(int l, const Pass& p, int i, bool rotated);
    void store_paged(int l, KvCache& cache, const Pass& p, int i, const Capture& want);
    void attend_paged(int l, KvCache& cache, const Pass& p, int i, const Capture& want);
    // Sequence i's rows of this pass: q, att: [T, dim]; k, v: [T, kv_dim].
    struct SeqRows {
        DeviceSpan q, k, v, att;
    };
    SeqRows rows_of(const Pass& p, int i) const;
    // RoPE on sequence i's q and k rows at their positions (none for GPT-2).
    void rope_rows(int l, const Pass& p, int i, const SeqRows& r);
    // The K/V rows just computed into the capture buffer, for a pass whose finish() cannot read
    // them from a contiguous cache (a graph's, a paged one's): [L, 2, kv_keep, kv_dim].
    void keep_new_kv(int l, const Pass& p, int i, const Capture& want, const SeqRows& r);
    // Where layer l's attention weights of sequence i go: straight into the capture buffer,
    // scratch, or nowhere; then, after the attention, the kept rows and vectors into the capture
    // buffer.
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
        log_->add(k, config_, layer, n_rows, at, own_call);
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
        be_.rmsnorm(out, x, w(gain, config_.dim), R, config_.dim, config_.norm_eps);
    }
    // out = (x - mean) / deviation * gain + bias: [R, dim]
    void layernorm(At at, DeviceSpan out, DeviceSpan x, const float* gain, const float* bias,
                   int R) {
        op(at.kind, at.layer, R);
        be_.layernorm(out, x, w(gain, config_.dim), w(bias, config_.dim), R, config_.dim,
                      config_.norm_eps);
    }
    // x[r, :] += b for every row r: [R, n]
    void add_bias(At at, DeviceSpan x, const float* b, int R, int n) {
        op(at.kind, at.layer, R);
        be_.add_bias(x, w(b, std::size_t(n)), R, n);
    }
    // x += y: [R, dim] (a residual connection)
    void add(At at, DeviceSpan x, DeviceSpan y, int R) {
        op(at.kind, at.layer, R);
        be_.add(x, y, std::size_t(R) * config_.dim);
    }
    // h1 = silu(h1) * h3: [R, hidden]
    void swiglu(At at, DeviceSpan h1, DeviceSpan h3, int R) {
        op(at.kind, at.layer, R);
        be_.swiglu(h1, h3, std::size_t(R) * config_.hidden_dim);
    }
    // h = gelu(h): [R, hidden]
    void gelu(At at, DeviceSpan h, int R) {
        op(at.kind, at.layer, R);
        be_.gelu(h, std::size_t(R) * config_.hidden_dim);
    }
    // out[r, :] = table[ids[r], :]: [R, dim] from a float32 table of `rows` rows
    void lookup(At at, DeviceSpan out, const float* table, int rows, const int* ids, int R) {
        op(at.kind, at.layer, R);
        be_.embed(out, w(table, std::size_t(rows) * config_.dim), ids, R, config_.dim);
    }
    // A replayed graph issues no op: its log is the recording's, each op's shapes and FLOPs
    // counted again at its sequence's position now.
    void replay_log(const Pass& p);
    void ensure_scratch(int rows, std::size_t probs_floats, std::size_t capture_floats);
    // The last `keep` of a sequence's T rows [T, dim] into layer `layer` of the capture buffer
    // region `at` [n_layers, keep, dim] (one device-side copy).
    void gather_rows(DeviceSpan rows, std::size_t at, int layer, int T, int keep);
    void unpack(const CaptureLayout& at, int i, int keep, int kv_keep, std::size_t probs_row,
                const Capture& want, ForwardResult& out) const;
    void read_rows(const KvCache& cache, int first, int n, std::vector<float>& out);
    // A paged cache's rows [first, first + n) of layer l, K and V, to or from contiguous rows
    // (`rows_k`, `rows_v`: [n, kv_dim]) through its block table, one copy per run in a block.
    enum class Way { FromBlocks, ToBlocks };
    void through_table(const KvCache& cache, int l, int first, int n, DeviceSpan rows_k,
                       DeviceSpan rows_v, Way way);

    const TransformerModel& model_;
    const ModelConfig& config_;
    Backend& be_;
    bool compact_ = false;  // the backend reads the model's compact matrices where they lie
    // The float32 views the passes read: the model's, or (compact weights on a backend that
    // multiplies float32 only) expanded_.
    const LlamaWeights* float_weights_ = nullptr;
    LlamaWeights expanded_;
    DeviceBuffer weights_;
    DeviceBuffer inv_freq_;  // [head_dim / 2]: RoPE's frequencies (core/model/rope_frequencies.h)
    std::vector<std::unique_ptr<KvCache>> caches_;
    bool paged_ = false;
    int sinks_ = 0, window_ = 0;  // paged: the earlier rows a pass sees (window 0: all)
    SinkPositions sink_positions_ = SinkPositions::Cache;
    // Paged, read in place: StreamingLLM's sinks moved forward, [sinks, kv_dim]; RoPE's q side
    // for shift_keys, [dim] (its result unused).
    DeviceBuffer sink_k_, shift_q_;
    // Paged, on a backend that does not read rows in place or from a quantised pool: the rows a
    // pass of one slot sees, of one layer, gathered (dequantised) into contiguous rows:
    // [keys, kv_dim] each.
    DeviceBuffer gather_k_, gather_v_;
    CompactWeights
        device_compact_;  // the model's compact matrices, each pointing at the backend's copy
    std::vector<const unsigned char*> adopted_;
    int scratch_rows_ = 0;
    // A pass's activations, the short names run.c's RunState gives them (x, xb, q, k, v): x_, xb_,
    // q_, att_ (the attention output) [rows, dim]; k_, v_ [rows, kv_dim]; h1_, h3_ the FFN's
    // [rows, hidden_dim]; probs_ the attention weights; captures_ the capture buffer.
    DeviceBuffer x_, xb_, q_, k_, v_, att_, h1_, h3_, probs_, captures_;
    HostBuffer host_;  // the host copy of captures_ (page-locked on a GPU)
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
inline std::size_t grown(std::size_t have, std::size_t need) {
    return need <= have ? have : std::max(need, 2 * have);
}

// Logs the ops below as counted at sequence i's position, until the scope ends.
struct CountedAt {
    int& seq;
    CountedAt(int& s, int i) : seq(s) { seq = i; }
    ~CountedAt() { seq = -1; }
};

}  // namespace kvs
