#include "core/llama_model.h"

#include <algorithm>
#include <cstring>

#include "core/backend.h"
#include "core/error.h"

namespace kvs {
namespace {

// One sequence of a Llama model on a backend: the weights uploaded once, the KV cache, scratch.
class LlamaRunner final : public Runner {
public:
    LlamaRunner(const LlamaModel& m, Backend& be)
        : m_(m),
          c_(m.config()),
          be_(be),
          weights_(be, m.weights().storage.size()),
          cache_(be, c_.n_layers, c_.seq_len, c_.n_kv_heads, c_.head_dim()) {
        const auto& w = m.weights().storage;
        be.upload(weights_.span(), w.data(), w.size());
        be.synchronize();
    }

    void forward(std::span<const int> tokens, const Capture& want, ForwardResult& out) override;
    void reset() override { cache_.set_len(0); }
    KvShape kv() const override { return cache_.shape(); }
    std::string backend_name() const override { return be_.name(); }
    std::string device() const override { return be_.device(); }
    Backend* backend() override { return &be_; }

private:
    // The device copy of a host weight pointer: same offset into the uploaded storage.
    DeviceSpan w(const float* host, std::size_t n) const {
        return weights_.at(static_cast<std::size_t>(host - m_.weights().storage.data()), n);
    }
    void ensure_scratch(int T, int pos0, bool probs);

    const LlamaModel& m_;
    const ModelConfig& c_;
    Backend& be_;
    DeviceBuffer weights_;
    KvCache cache_;
    int scratch_rows_ = 0;
    DeviceBuffer x_, xb_, q_, k_, v_, att_, h1_, h3_, logits_, probs_;
    std::vector<float> staging_;
};

void LlamaRunner::ensure_scratch(int T, int pos0, bool probs) {
    const std::size_t d = c_.dim, kv = c_.kv_dim(), h = c_.hidden_dim;
    if (T > scratch_rows_) {
        scratch_rows_ = T;
        x_ = DeviceBuffer(be_, T * d);
        xb_ = DeviceBuffer(be_, T * d);
        q_ = DeviceBuffer(be_, T * d);
        k_ = DeviceBuffer(be_, T * kv);
        v_ = DeviceBuffer(be_, T * kv);
        att_ = DeviceBuffer(be_, T * d);
        h1_ = DeviceBuffer(be_, T * h);
        h3_ = DeviceBuffer(be_, T * h);
    }
    if (logits_.size() == 0) logits_ = DeviceBuffer(be_, c_.vocab_size);
    const std::size_t np = std::size_t(c_.n_heads) * T * (pos0 + T);
    if (probs && probs_.size() < np) probs_ = DeviceBuffer(be_, np);
}

void LlamaRunner::forward(std::span<const int> tokens, const Capture& want, ForwardResult& out) {
    const int T = static_cast<int>(tokens.size());
    const int pos0 = cache_.len();
    if (T == 0) throw Error("forward pass with no tokens");
    if (pos0 + T > c_.seq_len)
        throw Error("context is full: " + std::to_string(pos0 + T) + " positions needed, the " +
                    "model's context is " + std::to_string(c_.seq_len));
    for (int t : tokens)
        if (t < 0 || t >= c_.vocab_size)
            throw Error("token id " + std::to_string(t) + " is outside the vocabulary (" +
                        std::to_string(c_.vocab_size) + ")");

    const int D = c_.dim, KV = c_.kv_dim(), HD = c_.head_dim(), H = c_.n_heads, HID = c_.hidden_dim;
    const std::size_t d = D, kv = KV, hid = HID;
    const LlamaWeights& W = m_.weights();
    ensure_scratch(T, pos0, want.attention);
    const int keep = want.last_rows < 0 ? T : std::min(want.last_rows, T);
    const int n_keys = pos0 + T;
    const DeviceSpan probs = want.attention ? probs_.span() : DeviceSpan{};
    if (want.attention) out.attention.resize(c_.n_layers, H, keep, pos0 + T - keep);
    out.head_outputs.clear();

    // x: [T, dim], the residual stream of every token processed in this pass.
    be_.embed(x_.span(), w(W.token_embedding, c_.vocab_size * d), tokens.data(), T, D);
    for (int l = 0; l < c_.n_layers; ++l) {
        // Attention block: xb = rmsnorm(x); q: [T, dim], k, v: [T, kv_dim]
        be_.rmsnorm(xb_.span(), x_.span(), w(W.rms_att + l * d, d), T, D);
        be_.matmul(q_.span(), xb_.span(), w(W.wq + l * d * d, d * d), T, D, D);
        be_.matmul(k_.span(), xb_.span(), w(W.wk + l * kv * d, kv * d), T, D, KV);
        be_.matmul(v_.span(), xb_.span(), w(W.wv + l * kv * d, kv * d), T, D, KV);
        be_.rope(q_.span(), k_.span(), T, pos0, D, KV, HD);
        // The cache grows by T rows; attention then reads rows 0..pos0+T-1 of it.
        be_.kv_append(cache_.k(l), cache_.v(l), k_.span(), v_.span(), pos0, T, KV);
        be_.attention(att_.span(), q_.span(), cache_.k(l), cache_.v(l), probs, T, pos0, H,
                      c_.n_kv_heads, HD);
        if (want.attention) {
            // probs: [H, T, n_keys]; keep the last `keep` rows, packed without masked cells.
            staging_.resize(std::size_t(keep) * n_keys);
            for (int h = 0; h < H; ++h) {
                const std::size_t first = (std::size_t(h) * T + (T - keep)) * n_keys;
                be_.download(staging_.data(), probs.at(first, staging_.size()), staging_.size());
                for (int r = 0; r < keep; ++r) {
                    auto dst = out.attention.row(l, h, r);
                    std::memcpy(dst.data(), staging_.data() + std::size_t(r) * n_keys,
                                dst.size() * sizeof(float));
                }
            }
        }
        be_.matmul(xb_.span(), att_.span(), w(W.wo + l * d * d, d * d), T, D, D);
        be_.add(x_.span(), xb_.span(), T * d);

        // Feed-forward block: x += w2(silu(w1 xb) * w3 xb); h1, h3: [T, hidden]
        be_.rmsnorm(xb_.span(), x_.span(), w(W.rms_ffn + l * d, d), T, D);
        be_.matmul(h1_.span(), xb_.span(), w(W.w1 + l * hid * d, hid * d), T, D, HID);
        be_.matmul(h3_.span(), xb_.span(), w(W.w3 + l * hid * d, hid * d), T, D, HID);
        be_.swiglu(h1_.span(), h3_.span(), T * hid);
        be_.matmul(xb_.span(), h1_.span(), w(W.w2 + l * d * hid, d * hid), T, HID, D);
        be_.add(x_.span(), xb_.span(), T * d);
    }
    // Only the last position's next-token distribution is needed: one row through the classifier.
    const DeviceSpan x_last = x_.at((T - 1) * d, d), xb_last = xb_.at(0, d);
    be_.rmsnorm(xb_last, x_last, w(W.rms_final, d), 1, D);
    be_.matmul(logits_.span(), xb_last, w(W.wcls, std::size_t(c_.vocab_size) * d), 1, D,
               c_.vocab_size);
    out.logits.resize(c_.vocab_size);
    be_.download(out.logits.data(), logits_.span(), c_.vocab_size);
    cache_.set_len(pos0 + T);

    out.kv_rows_kept = want.kv_rows ? keep : 0;
    out.kv_rows.resize(std::size_t(c_.n_layers) * 2 * out.kv_rows_kept * kv);
    const std::size_t block = std::size_t(out.kv_rows_kept) * kv, first = (pos0 + T - keep) * kv;
    for (int l = 0; l < c_.n_layers && block > 0; ++l) {
        float* dst = out.kv_rows.data() + std::size_t(l) * 2 * block;
        be_.download(dst, cache_.k(l).at(first, block), block);
        be_.download(dst + block, cache_.v(l).at(first, block), block);
    }
}

}  // namespace

LlamaModel::LlamaModel(Checkpoint ck, BpeTokenizer tok, std::string name)
    : ck_(std::move(ck)), tok_(std::move(tok)), name_(std::move(name)) {}

std::unique_ptr<Runner> LlamaModel::make_runner(Backend& backend) const {
    return std::make_unique<LlamaRunner>(*this, backend);
}

}  // namespace kvs
