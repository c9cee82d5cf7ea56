#include "core/model/toy_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "core/model/softmax.h"
#include "core/util/error.h"

namespace kvs {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Whether head h's rule lets a query at position q (1-based) attend to the key k (a position).
bool rule_selects(int h, float q, float k) {
    switch (static_cast<ToyHead>(h)) {
        case ToyHead::Even:
            return static_cast<int>(k) % 2 == 0;
        case ToyHead::Last:
            return k == q;
        case ToyHead::First:
            return k == 1.0f;
        case ToyHead::All:
            return true;
    }
    return false;
}

// One toy sequence: the K/V cache lives here, on the host.
class ToyRunner final : public Runner {
  public:
    explicit ToyRunner(const ModelConfig& c)
        : config_(c), keys_(c.seq_len, std::nanf("")), values_(c.seq_len, std::nanf("")) {}

    void forward(std::span<const int> tokens, const Capture& want, ForwardResult& out) override;
    void reset() override {
        // Emptied for real: a stale row read by mistake would show up as NaN.
        std::fill(keys_.begin(), keys_.end(), std::nanf(""));
        std::fill(values_.begin(), values_.end(), std::nanf(""));
        len_ = 0;
    }
    void truncate(int len) override {
        if (len < 0 || len > len_) throw Error("truncate past the cache's rows");
        std::fill(keys_.begin() + len, keys_.end(), std::nanf(""));
        std::fill(values_.begin() + len, values_.end(), std::nanf(""));
        len_ = len;
    }
    KvShape kv() const override { return {1, config_.seq_len, len_, 1, 1, 4}; }
    void set_mask(AttentionMask m) override {
        if (m != AttentionMask::Causal)
            throw Error(
                "the toy's heads are rules over the tokens up to the query (even positions, "
                "the last, the first, all): they have no keys to unmask; bidirectional "
                "attention needs a model with q and K vectors (the default model)");
    }
    std::string backend_name() const override { return "toy (host)"; }
    std::string device() const override { return "host CPU (core, no backend)"; }
    // out: [n_layers 1, 2 (K, V), n, kv_dim 1]
    void read_kv_rows(int first, int n, std::vector<float>& out) override {
        if (first < 0 || n < 0 || first + n > len_)
            throw Error("K/V rows " + std::to_string(first) + ".." + std::to_string(first + n - 1) +
                        " are not in the toy's cache (" + std::to_string(len_) + " rows)");
        out.assign(keys_.begin() + first, keys_.begin() + first + n);
        out.insert(out.end(), values_.begin() + first, values_.begin() + first + n);
    }

  private:
    const ModelConfig& config_;
    std::vector<float> keys_, values_;  // the cache: [seq_len, n_kv_heads 1, head_dim 1] each
    int len_ = 0;
    std::vector<float> scores_;  // [n_heads, T, n_keys]
};

void ToyRunner::forward(std::span<const int> tokens, const Capture& want, ForwardResult& out) {
    const int T = static_cast<int>(tokens.size());
    const int pos0 = len_;
    if (T == 0) throw Error("forward pass with no tokens");
    if (pos0 + T > config_.seq_len)
        throw Error("context is full: " + std::to_string(pos0 + T) + " positions needed, the " +
                    "toy model's context is " + std::to_string(config_.seq_len));
    const auto vocab = toy_vocabulary();
    for (int t : tokens)
        if (t < 0 || t >= config_.vocab_size)
            throw Error("token id " + std::to_string(t) + " is outside the toy vocabulary (" +
                        std::to_string(config_.vocab_size) + ")");

    // K and V of the new tokens, appended to the cache; earlier rows are only read.
    for (int t = 0; t < T; ++t) {
        keys_[pos0 + t] = static_cast<float>(pos0 + t + 1);
        values_[pos0 + t] = vocab[tokens[t]].value;
    }
    len_ = pos0 + T;

    const int H = config_.n_heads, n_keys = pos0 + T;
    // Scores of every new query against every key in the cache, by each head's rule, then the
    // causal mask: scores: [H, T, n_keys].
    scores_.assign(std::size_t(H) * T * n_keys, 0.0f);
    for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t) {
            const float q = static_cast<float>(pos0 + t + 1);  // the query: its position
            float* s = scores_.data() + (std::size_t(h) * T + t) * n_keys;
            for (int j = 0; j < n_keys; ++j) s[j] = rule_selects(h, q, keys_[j]) ? 0.0f : kNegInf;
            for (int j = pos0 + t + 1; j < n_keys; ++j) s[j] = kNegInf;  // causal mask
        }

    const int keep = want.last_rows < 0 ? T : std::min(want.last_rows, T);
    const int first_kept = T - keep;
    AttentionRows& a = out.attention;
    if (want.attention) {
        a.resize(1, H, keep, pos0 + first_kept);
        a.scores.assign(a.p.size(), 0.0f);
        a.empty_row.assign(std::size_t(H) * keep, 0);
    } else {
        a = AttentionRows();
    }
    out.head_outputs.assign(std::size_t(H) * keep, 0.0f);
    std::array<float, kToyHeads> context{};  // head outputs at the last position
    std::vector<float> w(n_keys);
    bool any_empty = false;
    for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t) {
            const int n = pos0 + t + 1;  // causal keys of this row
            const float* s = scores_.data() + (std::size_t(h) * T + t) * n_keys;
            float o = std::nanf("");  // "none" when no key may be attended to
            if (softmax(std::span<const float>(s, n), std::span<float>(w.data(), n))) {
                o = 0.0f;
                for (int j = 0; j < n; ++j) o += w[j] * values_[j];
            }
            if (t == T - 1) context[h] = o;
            if (t < first_kept) continue;
            const int r = t - first_kept;
            out.head_outputs[std::size_t(h) * keep + r] = o;
            if (!want.attention) continue;
            std::copy_n(w.begin(), n, a.row(0, h, r).begin());
            std::copy_n(s, n, a.scores.begin() + a.row_offset(0, h, r));
            if (std::isnan(o)) a.empty_row[std::size_t(h) * keep + r] = any_empty = true;
        }
    if (want.attention && !any_empty) a.empty_row.clear();

    // logits: [vocab] = projection [vocab, 4] . context [4]; a head with no output adds nothing.
    out.logits.assign(config_.vocab_size, 0.0f);
    for (int i = 0; i < config_.vocab_size; ++i)
        for (int h = 0; h < H; ++h)
            if (!std::isnan(context[h])) out.logits[i] += vocab[i].projection[h] * context[h];

    // kv_rows: [n_layers 1, 2 (K, V), rows, kv_dim 1]; the toy's heads have no q vectors, and
    // their outputs are head_outputs.
    out.q_rows.clear();
    out.attn_out.clear();
    const int kv_rows = want.all_kv_rows ? T : keep;
    out.kv_rows_kept = want.kv_rows ? kv_rows : 0;
    out.kv_rows.clear();
    if (want.kv_rows) read_kv_rows(len_ - kv_rows, kv_rows, out.kv_rows);
}

ModelConfig toy_config() {
    ModelConfig c;
    c.dim = kToyHeads;  // the context vector: one scalar per head
    c.hidden_dim = 0;   // no feed-forward block
    c.n_layers = 1;
    c.n_heads = kToyHeads;
    c.n_kv_heads = 1;  // one K/V row per token, shared by the four heads
    c.vocab_size = static_cast<int>(toy_vocabulary().size());
    c.seq_len = ToyModel::kContext;
    c.shared_classifier = false;  // the projection is not the value table
    return c;
}

}  // namespace

const char* toy_head_name(int head) {
    static const char* const names[] = {"even", "last", "first", "all"};
    return head >= 0 && head < kToyHeads ? names[head] : "?";
}

const char* toy_head_rule(int head) {
    static const char* const rules[] = {"attend to tokens at even positions",
                                        "attend to the last token", "attend to the first token",
                                        "attend to every token"};
    return head >= 0 && head < kToyHeads ? rules[head] : "?";
}

ToyModel::ToyModel() : config_(toy_config()) {}

std::unique_ptr<Runner> ToyModel::make_runner(Backend&) const {
    return std::make_unique<ToyRunner>(config_);
}

StepCounts ToyModel::count_forward(int pos0, int T) const {
    const double H = config_.n_heads, V = config_.vocab_size, kv = config_.kv_dim();
    const double rows = T, all_keys = rows * (pos0 + T);
    const double causal_keys = rows * pos0 + rows * (rows + 1) / 2;
    StepCounts s;
    s.matmul_flops = 2.0 * config_.dim * V;                  // projection, last row only
    s.attention_flops = H * all_keys + 2 * H * causal_keys;  // scores by rule, weighted sums
    s.flops = s.matmul_flops + s.attention_flops + 5 * H * causal_keys;  // + softmax
    const double weight_bytes = 4.0 * (V + V * config_.dim);             // value table + projection
    s.weight_bytes = weight_bytes;
    s.kv_read_bytes = 4.0 * 2 * kv * (pos0 + rows);
    s.kv_write_bytes = 4.0 * 2 * kv * rows;
    s.bytes = s.weight_bytes + s.kv_read_bytes + s.kv_write_bytes;
    return s;
}

}  // namespace kvs
