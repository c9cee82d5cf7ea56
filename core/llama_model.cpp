#include "core/llama_model.h"

#include <algorithm>
#include <cstring>

#include "core/backend.h"
#include "core/error.h"

namespace kvs {
namespace {

// Sequences of a Llama model on a backend: the weights uploaded once, one KV cache per slot,
// scratch sized for the largest pass so far. Runner is the one-sequence view (slot 0).
class LlamaRunner final : public Runner, public BatchRunner {
  public:
    LlamaRunner(const LlamaModel& m, Backend& be, int slots) : m_(m), c_(m.config()), be_(be) {
        // The CPU computes on the model's (mapped) floats; other backends copy them once.
        weights_ = DeviceBuffer::adopt(be, m.weights().all.data(), m.weights().all.size());
        for (int i = 0; i < slots; ++i)
            caches_.push_back(std::make_unique<KvCache>(be, c_.n_layers, c_.seq_len, c_.n_kv_heads,
                                                        c_.head_dim()));
        be.synchronize();
    }

    // Runner: one sequence in slot 0.
    void forward(std::span<const int> tokens, const Capture& want, ForwardResult& out) override {
        const SeqInput one{0, tokens};
        forward_batch(std::span<const SeqInput>(&one, 1), want, std::span<ForwardResult>(&out, 1));
    }
    void reset() override { caches_[0]->set_len(0); }
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
    void reset_slot(int slot) override { caches_.at(slot)->set_len(0); }
    KvShape kv(int slot) const override { return caches_.at(slot)->shape(); }

  private:
    // The backend's view of a host weight pointer: same offset into the adopted floats.
    DeviceSpan w(const float* host, std::size_t n) const {
        return weights_.at(static_cast<std::size_t>(host - m_.weights().all.data()), n);
    }
    // Where one pass's results sit, in floats, in the device staging buffer and in its host copy:
    // [logits: B x vocab | per sequence: attention [L, H, keep, n_keys], q and attention output
    // [L, keep, dim] each, K/V rows [L, 2, kv_keep, kv_dim]]. Everything a step returns is
    // gathered there on the device and comes back in one download (one device-to-host copy, one
    // stream sync per step on a GPU).
    struct StageLayout {
        std::vector<std::size_t> probs, q, attn_out, kv;  // per sequence: offsets of its regions
        std::size_t total = 0;
    };
    void ensure_scratch(int rows, std::size_t probs_floats, std::size_t stage_floats);
    // The last `keep` of a sequence's T rows [T, dim] into layer `layer` of the stage region
    // `at` [n_layers, keep, dim] (one device-side copy).
    void gather_rows(DeviceSpan rows, std::size_t at, int layer, int T, int keep);
    void unpack(const StageLayout& at, int i, int keep, int kv_keep, int n_keys,
                const Capture& want, ForwardResult& out) const;
    void read_rows(const KvCache& cache, int first, int n, std::vector<float>& out);

    const LlamaModel& m_;
    const ModelConfig& c_;
    Backend& be_;
    DeviceBuffer weights_;
    std::vector<std::unique_ptr<KvCache>> caches_;
    int scratch_rows_ = 0;
    DeviceBuffer x_, xb_, q_, k_, v_, att_, h1_, h3_, probs_, stage_;
    HostBuffer host_;  // the host copy of stage_ (page-locked on a GPU)
    std::vector<int> all_tokens_;
};

// Grow-only buffers: to `need`, at least doubling, so a sequence that grows by a token a step
// (uncached decoding) reallocates a logarithmic number of times, not at every step.
std::size_t grown(std::size_t have, std::size_t need) {
    return need <= have ? have : std::max(need, 2 * have);
}

void LlamaRunner::ensure_scratch(int rows, std::size_t probs_floats, std::size_t stage_floats) {
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
        h3_ = DeviceBuffer(be_, rows * h);
    }
    if (probs_floats > probs_.size())
        probs_ = DeviceBuffer(be_, grown(probs_.size(), probs_floats));
    if (stage_floats > stage_.size())
        stage_ = DeviceBuffer(be_, grown(stage_.size(), stage_floats));
    host_.reserve(be_, stage_.size());
}

void LlamaRunner::gather_rows(DeviceSpan rows, std::size_t at, int layer, int T, int keep) {
    const std::size_t d = c_.dim, n = std::size_t(keep) * d;
    be_.copy_rows(stage_.at(at + layer * n, n), n, rows.at(std::size_t(T - keep) * d, n), n, 1, n);
}

// Sequence i's part of the host copy -> out: logits, attention rows packed without masked cells,
// q and attention output rows, K/V rows.
void LlamaRunner::unpack(const StageLayout& at, int i, int keep, int kv_keep, int n_keys,
                         const Capture& want, ForwardResult& out) const {
    const float* host = host_.data();
    const std::size_t vocab = c_.vocab_size;
    out.logits.assign(host + i * vocab, host + (i + 1) * vocab);
    if (want.attention)
        for (int l = 0; l < c_.n_layers; ++l)
            for (int h = 0; h < c_.n_heads; ++h)
                for (int r = 0; r < keep; ++r) {
                    auto row = out.attention.row(l, h, r);
                    const std::size_t src =
                        at.probs[i] + ((std::size_t(l) * c_.n_heads + h) * keep + r) * n_keys;
                    std::memcpy(row.data(), host + src, row.size() * sizeof(float));
                }
    if (want.vectors) {
        const std::size_t n = std::size_t(c_.n_layers) * keep * c_.dim;
        out.q_rows.assign(host + at.q[i], host + at.q[i] + n);
        out.attn_out.assign(host + at.attn_out[i], host + at.attn_out[i] + n);
    }
    if (want.kv_rows) {
        const std::size_t n = std::size_t(c_.n_layers) * 2 * kv_keep * c_.kv_dim();
        out.kv_rows_kept = kv_keep;
        out.kv_rows.assign(host + at.kv[i], host + at.kv[i] + n);
    } else {
        out.kv_rows_kept = 0;
        out.kv_rows.clear();
    }
}

// Cache rows first..first+n-1 of every layer: out [n_layers, 2 (K, V), n, kv_dim].
void LlamaRunner::read_rows(const KvCache& cache, int first, int n, std::vector<float>& out) {
    if (first < 0 || n < 0 || first + n > cache.len())
        throw Error("K/V rows " + std::to_string(first) + ".." + std::to_string(first + n - 1) +
                    " are not in the cache (" + std::to_string(cache.len()) + " rows)");
    const std::size_t kv = c_.kv_dim(), block = std::size_t(n) * kv;
    const std::size_t offset = std::size_t(first) * kv, layer = std::size_t(c_.seq_len) * kv;
    const std::size_t total = std::size_t(c_.n_layers) * 2 * block;
    out.resize(total);
    if (total == 0) return;
    // Gathered on the device as a step's captures are, then one download.
    ensure_scratch(0, 0, total);
    be_.copy_rows(stage_.at(0, 0), 2 * block, cache.k_all().at(offset, 0), layer, c_.n_layers,
                  block);
    be_.copy_rows(stage_.at(block, 0), 2 * block, cache.v_all().at(offset, 0), layer, c_.n_layers,
                  block);
    be_.download(host_.data(), stage_.at(0, total), total);
    std::memcpy(out.data(), host_.data(), total * sizeof(float));
}

void LlamaRunner::forward_batch(std::span<const SeqInput> seqs, const Capture& want,
                                std::span<ForwardResult> out) {
    const int B = static_cast<int>(seqs.size());
    if (B == 0 || B > max_batch() || static_cast<int>(out.size()) < B)
        throw Error("forward pass with " + std::to_string(B) + " sequences (runner holds " +
                    std::to_string(max_batch()) + ")");
    // Per sequence: rows [first[i], first[i] + T[i]) of the stacked activations.
    std::vector<int> first(B), T(B), pos0(B), keep(B);
    int R = 0;
    std::size_t probs_floats = 0;  // scratch for a sequence whose kept rows are fewer than its T
    all_tokens_.clear();
    for (int i = 0; i < B; ++i) {
        const SeqInput& s = seqs[i];
        if (s.slot < 0 || s.slot >= max_batch())
            throw Error("no KV cache slot " + std::to_string(s.slot));
        for (int j = 0; j < i; ++j)
            if (seqs[j].slot == s.slot) throw Error("two sequences share a KV cache slot");
        T[i] = static_cast<int>(s.tokens.size());
        pos0[i] = caches_[s.slot]->len();
        if (T[i] == 0) throw Error("forward pass with no tokens");
        if (pos0[i] + T[i] > c_.seq_len)
            throw Error("context is full: " + std::to_string(pos0[i] + T[i]) +
                        " positions needed, the model's context is " + std::to_string(c_.seq_len));
        for (int t : s.tokens)
            if (t < 0 || t >= c_.vocab_size)
                throw Error("token id " + std::to_string(t) + " is outside the vocabulary (" +
                            std::to_string(c_.vocab_size) + ")");
        first[i] = R;
        R += T[i];
        keep[i] = want.last_rows < 0 ? T[i] : std::min(want.last_rows, T[i]);
        if (want.attention && keep[i] < T[i])
            probs_floats =
                std::max(probs_floats, std::size_t(c_.n_heads) * T[i] * (pos0[i] + T[i]));
        all_tokens_.insert(all_tokens_.end(), s.tokens.begin(), s.tokens.end());
    }

    const int D = c_.dim, KV = c_.kv_dim(), HD = c_.head_dim(), H = c_.n_heads, HID = c_.hidden_dim;
    const std::size_t d = D, kv = KV, hid = HID, rows = R;
    const LlamaWeights& W = m_.weights();
    const std::size_t L = c_.n_layers, vocab = c_.vocab_size;
    std::vector<int> kv_keep(B);
    StageLayout stage;
    stage.total = B * vocab;
    for (int i = 0; i < B; ++i) {
        kv_keep[i] = want.all_kv_rows ? T[i] : keep[i];
        stage.probs.push_back(stage.total);
        if (want.attention) stage.total += L * H * keep[i] * (pos0[i] + T[i]);
        stage.q.push_back(stage.total);
        if (want.vectors) stage.total += L * keep[i] * d;
        stage.attn_out.push_back(stage.total);
        if (want.vectors) stage.total += L * keep[i] * d;
        stage.kv.push_back(stage.total);
        if (want.kv_rows) stage.total += L * 2 * kv_keep[i] * kv;
    }
    ensure_scratch(R, probs_floats, stage.total);
    for (int i = 0; i < B; ++i) {
        out[i].head_outputs.clear();
        out[i].ops.clear();
        if (want.attention)
            out[i].attention.resize(c_.n_layers, H, keep[i], pos0[i] + T[i] - keep[i]);
        if (!want.vectors) {
            out[i].q_rows.clear();
            out[i].attn_out.clear();
        }
    }

    // The op strip: one record per op as it is issued (rows, and the position the rows start
    // at for the attention ops); a batch logs into out[0].
    OpLog* log = want.op_log ? &out[0].ops : nullptr;
    if (log) log->clear();
    auto op = [&](OpKind k, int layer, int n_rows, int at = 0, bool own_call = true) {
        if (log) log->add(k, c_, layer, n_rows, at, own_call);
    };

    // x: [R, dim], the residual stream of every row processed in this pass (all sequences).
    op(OpKind::Embedding, -1, R);
    be_.embed(x_.span(), w(W.token_embedding, c_.vocab_size * d), all_tokens_.data(), R, D);
    for (int l = 0; l < c_.n_layers; ++l) {
        // Attention block: xb = rmsnorm(x); q: [R, dim], k, v: [R, kv_dim]
        op(OpKind::RmsNorm, l, R);
        be_.rmsnorm(xb_.span(), x_.span(), w(W.rms_att + l * d, d), R, D);
        op(OpKind::QProj, l, R);
        be_.matmul(q_.span(), xb_.span(), w(W.wq + l * d * d, d * d), R, D, D);
        op(OpKind::KProj, l, R);
        be_.matmul(k_.span(), xb_.span(), w(W.wk + l * kv * d, kv * d), R, D, KV);
        op(OpKind::VProj, l, R);
        be_.matmul(v_.span(), xb_.span(), w(W.wv + l * kv * d, kv * d), R, D, KV);
        for (int i = 0; i < B; ++i) {
            // Each sequence has its own positions and cache: T[i] rows at pos0[i]..
            KvCache& cache = *caches_[seqs[i].slot];
            const DeviceSpan qi = q_.at(first[i] * d, T[i] * d),
                             ki = k_.at(first[i] * kv, T[i] * kv),
                             vi = v_.at(first[i] * kv, T[i] * kv),
                             ai = att_.at(first[i] * d, T[i] * d);
            op(OpKind::Rope, l, T[i], pos0[i]);
            be_.rope(qi, ki, T[i], pos0[i], D, KV, HD);
            // The cache grows by T rows; attention then reads rows 0..pos0+T-1 of it.
            op(OpKind::KvAppend, l, T[i], pos0[i]);
            be_.kv_append(cache.k(l), cache.v(l), ki, vi, pos0[i], T[i], KV);
            // One fused kernel: scores, softmax and weights . V share its measured time.
            op(OpKind::Scores, l, T[i], pos0[i]);
            op(OpKind::Softmax, l, T[i], pos0[i], false);
            op(OpKind::WeightedSum, l, T[i], pos0[i], false);
            // probs: [H, T, n_keys]. Every row kept (prefill, decode): written straight into the
            // stage; else into scratch, and the kept rows gathered into the stage by one copy.
            const std::size_t n_keys = pos0[i] + T[i], layer_probs = H * keep[i] * n_keys;
            const DeviceSpan kept = stage_.at(stage.probs[i] + l * layer_probs, layer_probs);
            const DeviceSpan probs = !want.attention   ? DeviceSpan{}
                                     : keep[i] == T[i] ? kept
                                                       : probs_.span();
            be_.attention(ai, qi, cache.k(l), cache.v(l), probs, T[i], pos0[i], H, c_.n_kv_heads,
                          HD);
            if (want.attention && keep[i] < T[i])
                be_.copy_rows(kept, keep[i] * n_keys, probs_.at((T[i] - keep[i]) * n_keys, 0),
                              T[i] * n_keys, H, keep[i] * n_keys);
            if (want.vectors) {
                // q as attention read it (after RoPE), the output before wo mixes the heads.
                gather_rows(qi, stage.q[i], l, T[i], keep[i]);
                gather_rows(ai, stage.attn_out[i], l, T[i], keep[i]);
            }
        }
        op(OpKind::OutProj, l, R);
        be_.matmul(xb_.span(), att_.span(), w(W.wo + l * d * d, d * d), R, D, D);
        op(OpKind::Residual, l, R);
        be_.add(x_.span(), xb_.span(), rows * d);

        // Feed-forward block: x += w2(silu(w1 xb) * w3 xb); h1, h3: [R, hidden]
        op(OpKind::FfnNorm, l, R);
        be_.rmsnorm(xb_.span(), x_.span(), w(W.rms_ffn + l * d, d), R, D);
        op(OpKind::FfnGate, l, R);
        be_.matmul(h1_.span(), xb_.span(), w(W.w1 + l * hid * d, hid * d), R, D, HID);
        op(OpKind::FfnUp, l, R);
        be_.matmul(h3_.span(), xb_.span(), w(W.w3 + l * hid * d, hid * d), R, D, HID);
        op(OpKind::SwiGLU, l, R);
        be_.swiglu(h1_.span(), h3_.span(), rows * hid);
        op(OpKind::FfnDown, l, R);
        be_.matmul(xb_.span(), h1_.span(), w(W.w2 + l * d * hid, d * hid), R, HID, D);
        op(OpKind::FfnResidual, l, R);
        be_.add(x_.span(), xb_.span(), rows * d);
    }
    // Only each sequence's last position needs a next-token distribution: those B rows are
    // normalised into xb[0..B) and go through the classifier together. logits: [B, vocab]
    for (int i = 0; i < B; ++i) {
        op(OpKind::FinalNorm, -1, 1);
        be_.rmsnorm(xb_.at(i * d, d), x_.at((first[i] + T[i] - 1) * d, d), w(W.rms_final, d), 1, D);
    }
    op(OpKind::Classifier, -1, B);
    be_.matmul(stage_.at(0, B * vocab), xb_.at(0, B * d), w(W.wcls, vocab * d), B, D,
               c_.vocab_size);
    for (int i = 0; i < B; ++i) {
        KvCache& cache = *caches_[seqs[i].slot];
        cache.set_len(pos0[i] + T[i]);
        if (!want.kv_rows || kv_keep[i] == 0) continue;
        // The last kv_keep rows of every layer's K, then V: [L, 2, kv_keep, kv_dim] in the stage.
        const std::size_t block = std::size_t(kv_keep[i]) * kv,
                          layer = std::size_t(c_.seq_len) * kv;
        const std::size_t kept_from = std::size_t(cache.len() - kv_keep[i]) * kv;
        be_.copy_rows(stage_.at(stage.kv[i], 0), 2 * block, cache.k_all().at(kept_from, 0), layer,
                      L, block);
        be_.copy_rows(stage_.at(stage.kv[i] + block, 0), 2 * block, cache.v_all().at(kept_from, 0),
                      layer, L, block);
    }
    be_.download(host_.data(), stage_.at(0, stage.total), stage.total);
    for (int i = 0; i < B; ++i) unpack(stage, i, keep[i], kv_keep[i], pos0[i] + T[i], want, out[i]);
}

}  // namespace

LlamaModel::LlamaModel(Checkpoint ck, BpeTokenizer tok, std::string name)
    : LlamaModel(std::move(ck), std::make_unique<BpeTokenizer>(std::move(tok)),
                 {BpeTokenizer::kBos}, std::move(name),
                 "llama2.c checkpoint, float32, mapped read-only") {}

LlamaModel::LlamaModel(Checkpoint ck, std::unique_ptr<const Tokenizer> tok, std::vector<int> stop,
                       std::string name, std::string format)
    : ck_(std::move(ck)),
      tok_(std::move(tok)),
      stop_(std::move(stop)),
      name_(std::move(name)),
      format_(std::move(format)) {}

std::unique_ptr<Runner> LlamaModel::make_runner(Backend& backend) const {
    return std::make_unique<LlamaRunner>(*this, backend, 1);
}

std::unique_ptr<BatchRunner> LlamaModel::make_batch_runner(Backend& backend, int max_batch) const {
    if (max_batch < 1 || max_batch > 64)
        throw Error("batch size " + std::to_string(max_batch) + " (must be 1..64)");
    return std::make_unique<LlamaRunner>(*this, backend, max_batch);
}

}  // namespace kvs
