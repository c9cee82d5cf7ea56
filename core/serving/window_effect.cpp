#include "core/serving/window_effect.h"

#include <algorithm>
#include <cmath>

#include "core/model/kv_blocks.h"
#include "core/util/error.h"

namespace kvs {

WindowEffect window_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                           int prompt_len, int sinks, int window, int block_size) {
    const ModelConfig& c = model.config();
    const int n = static_cast<int>(tokens.size());
    if (prompt_len < 1 || prompt_len > n || n > c.seq_len)
        throw Error("a window's effect measured on " + std::to_string(n) + " tokens");
    const int blocks = (n + block_size - 1) / block_size;
    // One sequence each: the full cache, and the same rows seen through the window.
    KvBlockPool pool(backend, c.n_layers, 2 * blocks, block_size, c.kv_dim());
    auto full = model.make_paged_runner(backend, 1, pool);
    auto bounded = model.make_paged_runner(backend, 1, pool);
    if (!full || !bounded) throw Error(model.name() + " has no paged KV cache");
    bounded->set_window(sinks, window);
    std::vector<int> table_full(blocks), table_bounded(blocks);
    for (int& b : table_full) b = pool.take();
    for (int& b : table_bounded) b = pool.take();
    const Capture none{false, false, -1, false, false, false, false, false};
    WindowEffect e;
    for (int len = 0, end = prompt_len; end <= n; len = end, ++end) {
        const SeqInput in{0, tokens.subspan(len, end - len)};
        ForwardResult a, b;
        full->set_blocks(0, table_full, len);
        full->forward_batch(std::span<const SeqInput>(&in, 1), none,
                            std::span<ForwardResult>(&a, 1));
        bounded->set_blocks(0, table_bounded, len);
        bounded->forward_batch(std::span<const SeqInput>(&in, 1), none,
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
