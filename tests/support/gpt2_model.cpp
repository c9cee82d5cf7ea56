#include "tests/support/gpt2_model.h"

#include <cmath>
#include <random>
#include <vector>

#include "core/loaders/checkpoint.h"
#include "core/loaders/model_loader.h"
#include "core/tokenizers/bpe_tokenizer.h"

namespace kvs::test {

std::unique_ptr<TransformerModel> random_gpt2(const Model& m, std::uint64_t seed, bool mlp_output) {
    ModelConfig c;
    c.arch = Architecture::Gpt2;
    c.dim = m.config().dim;
    c.hidden_dim = 4 * c.dim;
    c.n_layers = m.config().n_layers;
    c.n_heads = c.n_kv_heads = m.config().n_heads;
    c.vocab_size = m.config().vocab_size;
    c.seq_len = c.n_positions = m.config().seq_len;
    c.qkv_bias = true;
    c.validate("random_gpt2");

    auto all = std::make_shared<std::vector<float>>(c.stored_floats());
    Checkpoint ck;
    ck.config = c;
    point_llama_weights(ck.weights, all->data(), c, false);
    const LlamaWeights& w = ck.weights;
    std::mt19937_64 rng(seed);
    auto fill = [&](const float* at, std::size_t n, float centre, float spread) {
        float* p = all->data() + (at - all->data());
        std::uniform_real_distribution<float> u(centre - spread, centre + spread);
        for (std::size_t i = 0; i < n; ++i) p[i] = u(rng);
    };
    const float scale = 1.0f / std::sqrt(float(c.dim));
    fill(all->data(), all->size(), 0.0f, scale);  // matrices and embeddings
    const std::size_t d = c.dim, L = c.n_layers, h = c.hidden_dim;
    for (const float* gain : {w.norm_att, w.norm_ffn}) fill(gain, L * d, 1.0f, 0.25f);
    fill(w.norm_final, d, 1.0f, 0.25f);
    for (const float* b : {w.norm_att_bias, w.bq, w.bk, w.bv, w.bo, w.norm_ffn_bias, w.b2})
        fill(b, L * d, 0.0f, 0.1f);
    fill(w.b1, L * h, 0.0f, 0.1f);
    fill(w.norm_final_bias, d, 0.0f, 0.1f);
    if (!mlp_output) {
        fill(w.w2, L * d * h, 0.0f, 0.0f);
        fill(w.b2, L * d, 0.0f, 0.0f);
    }
    ck.weights.owner = all;
    return std::make_unique<TransformerModel>(
        std::move(ck),
        std::make_unique<BpeTokenizer>(dynamic_cast<const BpeTokenizer&>(m.tokenizer())),
        m.stop_tokens(), m.name() + "-gpt2", "in memory, random GPT-2-shaped weights");
}

std::unique_ptr<TransformerModel> default_gpt2(std::uint64_t seed) {
    return random_gpt2(*open_model("default"), seed);
}

}  // namespace kvs::test
