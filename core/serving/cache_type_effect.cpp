#include "core/serving/cache_type_effect.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/model/kv_blocks.h"
#include "core/util/error.h"

namespace kvs {

CacheTypeEffect cache_type_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                                  int prompt_len, KvCacheType type, int block_size) {
    const ModelConfig& c = model.config();
    const int n = static_cast<int>(tokens.size());
    if (prompt_len < 1 || prompt_len > n || n > c.seq_len || block_size < 1)
        throw Error(std::string("the ") + kv_cache_type_name(type) +
                    " cache's effect measured on " + std::to_string(n) + " tokens");
    const int blocks = (n + block_size - 1) / block_size;
    // One sequence each: the float32 cache, and the same tokens through a cache of `type`.
    KvBlockPool pool_f32(backend, c.n_layers, blocks, block_size, c.kv_dim());
    KvBlockPool pool_q(backend, c.n_layers, blocks, block_size, c.kv_dim(), type);
    auto exact = model.make_paged_runner(backend, 1, pool_f32);
    auto quantised = model.make_paged_runner(backend, 1, pool_q);
    if (!exact || !quantised) throw Error(model.name() + " has no paged KV cache");
    std::vector<int> table_f32(blocks), table_q(blocks);
    for (int& b : table_f32) b = pool_f32.take();
    for (int& b : table_q) b = pool_q.take();
    const Capture none{false, false, -1, false, false, false, false, false};
    CacheTypeEffect e;
    for (int len = 0, end = prompt_len; end <= n; len = end, ++end) {
        const SeqInput in{0, tokens.subspan(len, end - len)};
        ForwardResult a, b;
        exact->set_blocks(0, table_f32, len);
        exact->forward_batch(std::span<const SeqInput>(&in, 1), none,
                             std::span<ForwardResult>(&a, 1));
        quantised->set_blocks(0, table_q, len);
        quantised->forward_batch(std::span<const SeqInput>(&in, 1), none,
                                 std::span<ForwardResult>(&b, 1));
        for (std::size_t i = 0; i < a.logits.size(); ++i)
            e.max_logit_difference =
                std::max(e.max_logit_difference, double(std::fabs(a.logits[i] - b.logits[i])));
        const auto top = [](const std::vector<float>& v) {
            return std::max_element(v.begin(), v.end()) - v.begin();
        };
        ++e.passes;
        if (top(a.logits) == top(b.logits)) ++e.same_next_token;
    }
    return e;
}

}  // namespace kvs
