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
        weights_ = DeviceBuffer(be, m.weights().storage.size());
        be.upload(weights_.span(), m.weights().storage.data(), m.weights().storage.size());
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
    KvShape kv() const override { return caches_[0]->shape(); }
    std::string backend_name() const override { return be_.name(); }
    std::string device() const override { return be_.device(); }
    Backend* backend() override { return &be_; }

    // BatchRunner
    int max_batch() const override { return static_cast<int>(caches_.size()); }
    void forward_batch(std::span<const SeqInput> seqs, const Capture& want,
                       std::span<ForwardResult> out) override;
    void reset_slot(int slot) override { caches_.at(slot)->set_len(0); }
    KvShape kv(int slot) const override { return caches_.at(slot)->shape(); }

  private:
    // The device copy of a host weight pointer: same offset into the uploaded storage.
    DeviceSpan w(const float* host, std::size_t n) const {
        return weights_.at(static_cast<std::size_t>(host - m_.weights().storage.data()), n);
    }
    // Where one pass's results sit, in floats, in the device staging buffer and in its host copy:
    // [logits: B x vocab | per sequence: attention [L, H, keep, n_keys], K/V rows [L, 2, keep,
    // kv_dim]]. Everything a step returns is gathered there on the device and comes back in one
    // download (one device-to-host copy, one stream sync per step on a GPU).
    struct StageLayout {
        std::vector<std::size_t> probs, kv;  // per sequence: offsets of its regions
        std::size_t total = 0;
    };
    void ensure_scratch(int rows, std::size_t probs_floats, std::size_t stage_floats);
    void unpack(const StageLayout& at, int i, int keep, int n_keys, const Capture& want,
                ForwardResult& out) const;

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

// Sequence i's part of the host copy -> out: logits, attention rows packed without masked cells,
// K/V rows.
void LlamaRunner::unpack(const StageLayout& at, int i, int keep, int n_keys, const Capture& want,
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
                        at.probs[i] + ((std::size_t(l) * c_.n_heads + h) * keep + r) * n_keys;
                    std::memcpy(row.data(), host + src, row.size() * sizeof(float));
                }
    if (want.kv_rows) {
        const std::size_t n = std::size_t(c_.n_layers) * 2 * keep * c_.kv_dim();
        out.kv_rows_kept = keep;
        out.kv_rows.assign(host + at.kv[i], host + at.kv[i] + n);
    } else {
        out.kv_rows_kept = 0;
        out.kv_rows.clear();
    }
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
    StageLayout at;
    at.total = B * vocab;
    for (int i = 0; i < B; ++i) {
        at.probs.push_back(at.total);
        if (want.attention) at.total += L * H * keep[i] * (pos0[i] + T[i]);
        at.kv.push_back(at.total);
        if (want.kv_rows) at.total += L * 2 * keep[i] * kv;
    }
    ensure_scratch(R, probs_floats, at.total);
    for (int i = 0; i < B; ++i) {
        out[i].head_outputs.clear();
        if (want.attention)
            out[i].attention.resize(c_.n_layers, H, keep[i], pos0[i] + T[i] - keep[i]);
    }

    // x: [R, dim], the residual stream of every row processed in this pass (all sequences).
    be_.embed(x_.span(), w(W.token_embedding, c_.vocab_size * d), all_tokens_.data(), R, D);
    for (int l = 0; l < c_.n_layers; ++l) {
        // Attention block: xb = rmsnorm(x); q: [R, dim], k, v: [R, kv_dim]
        be_.rmsnorm(xb_.span(), x_.span(), w(W.rms_att + l * d, d), R, D);
        be_.matmul(q_.span(), xb_.span(), w(W.wq + l * d * d, d * d), R, D, D);
        be_.matmul(k_.span(), xb_.span(), w(W.wk + l * kv * d, kv * d), R, D, KV);
        be_.matmul(v_.span(), xb_.span(), w(W.wv + l * kv * d, kv * d), R, D, KV);
        for (int i = 0; i < B; ++i) {
            // Each sequence has its own positions and cache: T[i] rows at pos0[i]..
            KvCache& cache = *caches_[seqs[i].slot];
            const DeviceSpan qi = q_.at(first[i] * d, T[i] * d),
                             ki = k_.at(first[i] * kv, T[i] * kv),
                             vi = v_.at(first[i] * kv, T[i] * kv),
                             ai = att_.at(first[i] * d, T[i] * d);
            be_.rope(qi, ki, T[i], pos0[i], D, KV, HD);
            // The cache grows by T rows; attention then reads rows 0..pos0+T-1 of it.
            be_.kv_append(cache.k(l), cache.v(l), ki, vi, pos0[i], T[i], KV);
            // probs: [H, T, n_keys]. Every row kept (prefill, decode): written straight into the
            // stage; else into scratch, and the kept rows gathered into the stage by one copy.
            const std::size_t n_keys = pos0[i] + T[i], layer_probs = H * keep[i] * n_keys;
            const DeviceSpan kept = stage_.at(at.probs[i] + l * layer_probs, layer_probs);
            const DeviceSpan probs = !want.attention   ? DeviceSpan{}
                                     : keep[i] == T[i] ? kept
                                                       : probs_.span();
            be_.attention(ai, qi, cache.k(l), cache.v(l), probs, T[i], pos0[i], H, c_.n_kv_heads,
                          HD);
            if (want.attention && keep[i] < T[i])
                be_.copy_rows(kept, keep[i] * n_keys, probs_.at((T[i] - keep[i]) * n_keys, 0),
                              T[i] * n_keys, H, keep[i] * n_keys);
        }
        be_.matmul(xb_.span(), att_.span(), w(W.wo + l * d * d, d * d), R, D, D);
        be_.add(x_.span(), xb_.span(), rows * d);

        // Feed-forward block: x += w2(silu(w1 xb) * w3 xb); h1, h3: [R, hidden]
        be_.rmsnorm(xb_.span(), x_.span(), w(W.rms_ffn + l * d, d), R, D);
        be_.matmul(h1_.span(), xb_.span(), w(W.w1 + l * hid * d, hid * d), R, D, HID);
        be_.matmul(h3_.span(), xb_.span(), w(W.w3 + l * hid * d, hid * d), R, D, HID);
        be_.swiglu(h1_.span(), h3_.span(), rows * hid);
        be_.matmul(xb_.span(), h1_.span(), w(W.w2 + l * d * hid, d * hid), R, HID, D);
        be_.add(x_.span(), xb_.span(), rows * d);
    }
    // Only each sequence's last position needs a next-token distribution: those B rows are
    // normalised into xb[0..B) and go through the classifier together. logits: [B, vocab]
    for (int i = 0; i < B; ++i)
        be_.rmsnorm(xb_.at(i * d, d), x_.at((first[i] + T[i] - 1) * d, d), w(W.rms_final, d), 1, D);
    be_.matmul(stage_.at(0, B * vocab), xb_.at(0, B * d), w(W.wcls, vocab * d), B, D,
               c_.vocab_size);
    for (int i = 0; i < B; ++i) {
        KvCache& cache = *caches_[seqs[i].slot];
        cache.set_len(pos0[i] + T[i]);
        if (!want.kv_rows || keep[i] == 0) continue;
        // The last keep rows of every layer's K, then V: [L, 2, keep, kv_dim] in the stage.
        const std::size_t block = std::size_t(keep[i]) * kv, layer = std::size_t(c_.seq_len) * kv;
        const std::size_t kept_from = std::size_t(cache.len() - keep[i]) * kv;
        be_.copy_rows(stage_.at(at.kv[i], 0), 2 * block, cache.k_all().at(kept_from, 0), layer, L,
                      block);
        be_.copy_rows(stage_.at(at.kv[i] + block, 0), 2 * block, cache.v_all().at(kept_from, 0),
                      layer, L, block);
    }
    be_.download(host_.data(), stage_.at(0, at.total), at.total);
    for (int i = 0; i < B; ++i) unpack(at, i, keep[i], pos0[i] + T[i], want, out[i]);
}

}  // namespace

LlamaModel::LlamaModel(Checkpoint ck, BpeTokenizer tok, std::string name)
    : ck_(std::move(ck)), tok_(std::move(tok)), name_(std::move(name)) {}

std::unique_ptr<Runner> LlamaModel::make_runner(Backend& backend) const {
    return std::make_unique<LlamaRunner>(*this, backend, 1);
}

std::unique_ptr<BatchRunner> LlamaModel::make_batch_runner(Backend& backend, int max_batch) const {
    if (max_batch < 1 || max_batch > 64)
        throw Error("batch size " + std::to_string(max_batch) + " (must be 1..64)");
    return std::make_unique<LlamaRunner>(*this, backend, max_batch);
}

}  // namespace kvs
