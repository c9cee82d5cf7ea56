#include "core/serving/cache_effect.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/util/error.h"

namespace kvs {
namespace {

// One sequence on its own pool and paged runner, the pool's blocks its table in order.
struct OneSequence {
    KvBlockPool pool;
    std::unique_ptr<BatchRunner> runner;
    std::vector<int> table;
    OneSequence(const Model& model, Backend& backend, int rows, int block_size,
                const CacheVariant& v)
        : pool(backend, model.config().n_layers, (rows + block_size - 1) / block_size, block_size,
               model.config().kv_dim(), v.type, v.scale_mode) {
        if (pool.quantised() && v.scale_mode != KvScaleMode::Token) pool.set_scales(v.scales);
        runner = model.make_paged_runner(backend, 1, pool);
        if (!runner) throw Error(model.name() + " has no paged KV cache");
        if (v.window > 0) runner->set_window(v.sinks, v.window, v.positions);
        table.resize(pool.n_blocks());
        std::iota(table.begin(), table.end(), 0);
    }
    // Rows [len, len + in.size()) from `tokens`; the last row's logits into `out`.
    void pass(std::span<const int> tokens, int len, int end, ForwardResult& out) {
        const Capture none{false, false, -1, false, false, false, false, false};
        const SeqInput in{0, tokens.subspan(len, end - len)};
        runner->set_blocks(0, table, len);
        runner->forward_batch(std::span<const SeqInput>(&in, 1), none,
                              std::span<ForwardResult>(&out, 1));
    }
};

std::size_t top(const std::vector<float>& v) {
    return std::max_element(v.begin(), v.end()) - v.begin();
}

// -log softmax(logits)[token]
double surprise(const std::vector<float>& logits, int token) {
    const float mx = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float x : logits) sum += std::exp(double(x) - mx);
    return std::log(sum) - (double(logits.at(token)) - mx);
}

}  // namespace

CacheEffect cache_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                         int prompt_len, const CacheVariant& variant, int block_size) {
    const ModelConfig& c = model.config();
    const int n = static_cast<int>(tokens.size());
    if (prompt_len < 1 || prompt_len > n || n > c.seq_len || block_size < 1)
        throw Error("a cache's effect measured on " + std::to_string(n) + " tokens");
    // One sequence each: the full float32 cache, and the same tokens through the variant.
    OneSequence full(model, backend, n, block_size, CacheVariant{});
    OneSequence other(model, backend, n, block_size, variant);
    CacheEffect e;
    for (int len = 0, end = prompt_len; end <= n; len = end, ++end) {
        ForwardResult a, b;
        full.pass(tokens, len, end, a);
        other.pass(tokens, len, end, b);
        for (std::size_t i = 0; i < a.logits.size(); ++i)
            e.max_logit_difference =
                std::max(e.max_logit_difference, double(std::fabs(a.logits[i] - b.logits[i])));
        ++e.passes;
        if (top(a.logits) == top(b.logits)) ++e.same_next_token;
    }
    return e;
}

CacheEffect window_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                          int prompt_len, int sinks, int window, int block_size,
                          SinkPositions positions) {
    CacheVariant v;
    v.sinks = sinks;
    v.window = window;
    v.positions = positions;
    return cache_effect(model, backend, tokens, prompt_len, v, block_size);
}

CacheEffect cache_type_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                              int prompt_len, KvCacheType type, int block_size, KvScaleMode mode,
                              const KvScales& scales) {
    CacheVariant v;
    v.type = type;
    v.scale_mode = mode;
    v.scales = scales;
    return cache_effect(model, backend, tokens, prompt_len, v, block_size);
}

namespace {
// `text` one token a pass through `variant` (as far as `limit` tokens), each pass's logits
// scoring the token after it.
Perplexity perplexity(const Model& model, Backend& backend, std::span<const int> text, int limit,
                      const CacheVariant& variant, int block_size) {
    const int ctx = model.config().seq_len, n = std::min<int>(limit, text.size());
    OneSequence seq(model, backend, n, block_size, variant);
    Perplexity p;
    for (int len = 0; len + 1 < n; ++len) {
        ForwardResult out;
        seq.pass(text, len, len + 1, out);
        // The token at index len + 1 sits at position len + 2.
        const double s = surprise(out.logits, text[len + 1]);
        if (len + 2 <= ctx) {
            p.within += s;
            ++p.scored_within;
        } else {
            p.past += s;
            ++p.scored_past;
        }
    }
    p.within = p.scored_within > 0 ? std::exp(p.within / p.scored_within) : 0;
    p.past = p.scored_past > 0 ? std::exp(p.past / p.scored_past) : 0;
    return p;
}
}  // namespace

StreamEffect stream_effect(const Model& model, Backend& backend, std::span<const int> text,
                           int sinks, int window, int block_size) {
    const int ctx = model.config().seq_len;
    if (text.size() < 2 || block_size < 1 || window < 1)
        throw Error("a bounded cache measured on " + std::to_string(text.size()) + " tokens");
    StreamEffect e;
    e.tokens = static_cast<int>(text.size());
    e.context = ctx;
    e.sinks = sinks;
    e.window = window;
    e.full = perplexity(model, backend, text, ctx, CacheVariant{}, block_size);
    const int all = static_cast<int>(text.size());
    CacheVariant v;
    v.sinks = sinks;
    v.window = window;
    v.positions = SinkPositions::Cache;
    e.sinks_cache = perplexity(model, backend, text, all, v, block_size);
    v.positions = SinkPositions::Original;
    e.sinks_original = perplexity(model, backend, text, all, v, block_size);
    v.sinks = 0;
    v.window = window + sinks;
    e.no_sinks = perplexity(model, backend, text, all, v, block_size);
    return e;
}

}  // namespace kvs
