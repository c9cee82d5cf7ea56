#pragma once
// A loaded model's weights as the forward pass reads them: float32 views in llama2.c's order and
// shapes, and the matrices again in 16 or 8 bits when asked for. Every loader
// (core/loaders/checkpoint.h, core/loaders/gguf_llama.h, core/loaders/hf_llama.h) fills one;
// TransformerModel runs it.
#include <memory>
#include <span>

#include "core/model/compact_weights.h"
#include "core/model/model_config.h"

namespace kvs {

// Every weight, as views into one float array: the file's own bytes, mapped read-only
// (load_checkpoint), or a copy (parse_checkpoint). Shapes are [out, in] row-major, so a matmul
// computes out[i] = sum_j W[i, j] * x[j], as run.c does.
struct LlamaWeights {
    std::shared_ptr<const void> owner;       // keeps `all` alive: the mapping or the copy
    std::span<const float> all;              // [stored_floats]: every float after the header
    const float* token_embedding = nullptr;  // [vocab, dim]
    const float* norm_att = nullptr;         // [layers, dim]
    const float* wq = nullptr;               // [layers, dim, dim]
    const float* wk = nullptr;               // [layers, kv_dim, dim]
    const float* wv = nullptr;               // [layers, kv_dim, dim]
    const float* wo = nullptr;               // [layers, dim, dim]
    const float* norm_ffn = nullptr;         // [layers, dim]
    const float* w1 = nullptr;               // [layers, hidden, dim]
    const float* w2 = nullptr;               // [layers, dim, hidden]
    const float* w3 = nullptr;               // [layers, hidden, dim]
    const float* norm_final = nullptr;       // [dim]
    const float* wcls = nullptr;             // [vocab, dim]; token_embedding when shared
    // ModelConfig::qkv_bias (Qwen2), else null: added to q, k and v after their projections.
    const float* bq = nullptr;  // [layers, dim]
    const float* bk = nullptr;  // [layers, kv_dim]
    const float* bv = nullptr;  // [layers, kv_dim]
    // GPT-2 only (ModelConfig::gpt2()), else null. Its LayerNorms' gains are norm_att (ln_1),
    // norm_ffn (ln_2) and norm_final (ln_f); its MLP is w1 (c_fc, [layers, hidden, dim]) and
    // w2 (c_proj), with no w3. Hugging Face's Conv1D [in, out] matrices are stored transposed
    // here, [out, in], as every other matrix.
    const float* pos_embedding = nullptr;    // [n_positions, dim]: learned, added to the token's
    const float* norm_att_bias = nullptr;    // [layers, dim]: ln_1's bias
    const float* bo = nullptr;               // [layers, dim]: the attention output's bias
    const float* norm_ffn_bias = nullptr;    // [layers, dim]: ln_2's bias
    const float* b1 = nullptr;               // [layers, hidden]: the MLP up projection's bias
    const float* b2 = nullptr;               // [layers, dim]: the MLP down projection's bias
    const float* norm_final_bias = nullptr;  // [dim]: ln_f's bias
};

// A model as a loader gives it: its shapes, its float32 views and, when asked for, the compact
// matrices.
struct Checkpoint {
    ModelConfig config;
    LlamaWeights weights;
    CompactWeights compact;  // the matrices in 16 or 8 bits, when asked for (--weights)
};

// Points the views of `w` into `p`: floats in llama2.c's order (the file's, after the header),
// with or without the unused freq_cis block llama2.c stores before a separate classifier.
// GPT-2 (no llama2.c file holds one; the loaders' copies do): token and position embeddings,
// then per tensor kind over the layers ln_1 gain and bias, wq, wk, wv, bq, bk, bv, wo, bo,
// ln_2 gain and bias, w1, b1, w2, b2; then ln_f gain and bias, and the classifier when separate
// (ModelConfig::stored_floats counts the same; with_freq_cis is ignored).
void point_llama_weights(LlamaWeights& w, const float* p, const ModelConfig& c, bool with_freq_cis);

}  // namespace kvs
