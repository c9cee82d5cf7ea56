#include "core/serving/cache_effect.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/model/kv_blocks.h"
#include "core/util/error.h"

namespace kvs {

CacheEffect cache_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                         int prompt_len, const CacheVariant& variant, int block_size) {
    const ModelConfig& c = model.config();
    const int n = static_cast<int>(tokens.size());
    if (prompt_len < 1 || prompt_len > n || n > c.seq_len || block_size < 1)
        throw Error("a cache's effect measured on " + std::to_string(n) + " tokens");
    const int blocks = (n + block_size - 1) / block_size;
    // One sequence each: the full float32 cache, and the same tokens through the variant.
    KvBlockPool pool_full(backend, c.n_layers, blocks, block_size, c.kv_dim());
    KvBlockPool pool_variant(backend, c.n_layers, blocks, block_size, c.kv_dim(), variant.type);
    auto full = model.make_paged_runner(backend, 1, pool_full);
    auto other = model.make_paged_runner(backend, 1, pool_variant);
    if (!full || !other) throw Error(model.name() + " has no paged KV cache");
    if (variant.window > 0) other->set_window(variant.sinks, variant.window);
    std::vector<int> table_full(blocks), table_variant(blocks);
    for (int& b : table_full) b = pool_full.take();
    for (int& b : table_variant) b = pool_variant.take();
    const Capture none{false, false, -1, false, false, false, false, false, false};
    const auto top = [](const std::vector<float>& v) {
        return std::max_element(v.begin(), v.end()) - v.begin();
    };
    CacheEffect e;
    for (int len = 0, end = prompt_len; end <= n; len = end, ++end) {
        const SeqInput in{0, tokens.subspan(len, end - len)};
        ForwardResult a, b;
        full->set_blocks(0, table_full, len);
        full->forward_batch(std::span<const SeqInput>(&in, 1), none,
                            std::span<ForwardResult>(&a, 1));
        other->set_blocks(0, table_variant, len);
        other->forward_batch(std::span<const SeqInput>(&in, 1), none,
                             std::span<ForwardResult>(&b, 1));
        for (std::size_t i = 0; i < a.logits.size(); ++i)
            e.max_logit_difference =
                std::max(e.max_logit_difference, double(std::fabs(a.logits[i] - b.logits[i])));
        ++e.passes;
        if (top(a.logits) == top(b.logits)) ++e.same_next_token;
    }
    return e;
}

CacheEffect window_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                          int prompt_len, int sinks, int window, int block_size) {
    return cache_effect(model, backend, tokens, prompt_len, {KvCacheType::F32, sinks, window},
                        block_size);
}

CacheEffect cache_type_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                              int prompt_len, KvCacheType type, int block_size) {
    return cache_effect(model, backend, tokens, prompt_len, {type, 0, 0}, block_size);
}

}  // namespace kvs
