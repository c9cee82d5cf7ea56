#include "tests/support/qwen2_model.h"

#include <algorithm>
#include <random>
#include <vector>

#include "core/loaders/checkpoint.h"
#include "core/tokenizers/bpe_tokenizer.h"

namespace kvs::test {

std::unique_ptr<TransformerModel> with_qkv_biases(const Model& m, std::uint64_t seed) {
    const auto& lm = dynamic_cast<const TransformerModel&>(m);
    const LlamaWeights& w = lm.weights();
    ModelConfig c = lm.config();
    c.qkv_bias = true;
    const std::size_t d = c.dim, hd = c.hidden_dim, kv = c.kv_dim(), V = c.vocab_size,
                      L = c.n_layers;
    // The floats as point_llama_weights takes them, without freq_cis: [llama2.c's | biases]
    const std::size_t freq = 2 * std::size_t(c.seq_len) * (c.head_dim() / 2);
    auto all = std::make_shared<std::vector<float>>();
    all->reserve(c.stored_floats() - freq);
    auto put = [&](const float* p, std::size_t n) { all->insert(all->end(), p, p + n); };
    put(w.token_embedding, V * d);
    put(w.norm_att, L * d);
    put(w.wq, L * d * d);
    put(w.wk, L * kv * d);
    put(w.wv, L * kv * d);
    put(w.wo, L * d * d);
    put(w.norm_ffn, L * d);
    put(w.w1, L * hd * d);
    put(w.w2, L * d * hd);
    put(w.w3, L * hd * d);
    put(w.norm_final, d);
    if (!c.shared_classifier) put(w.wcls, V * d);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    while (all->size() < c.stored_floats() - freq) all->push_back(u(rng));

    Checkpoint ck;
    ck.config = c;
    point_llama_weights(ck.weights, all->data(), c, false);
    ck.weights.owner = all;
    return std::make_unique<TransformerModel>(
        std::move(ck),
        std::make_unique<BpeTokenizer>(dynamic_cast<const BpeTokenizer&>(m.tokenizer())),
        m.stop_tokens(), m.name() + "-qkv-bias", "in memory, q/k/v biases added");
}

}  // namespace kvs::test
