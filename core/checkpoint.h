#pragma once
// Reader for llama2.c checkpoints (the legacy "version 0" layout that run.c maps):
// a 7 x int32 header, then float32 tensors in a fixed order. Everything is validated before use.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "core/compact_weights.h"
#include "core/model_config.h"

namespace kvs {

// Every weight, as views into one float array: the file's own bytes, mapped read-only
// (load_checkpoint), or a copy (parse_checkpoint). Shapes are [out, in] row-major, so a matmul
// computes out[i] = sum_j W[i, j] * x[j], as run.c does.
struct LlamaWeights {
    std::shared_ptr<const void> owner;       // keeps `all` alive: the mapping or the copy
    std::span<const float> all;              // [stored_floats]: every float after the header
    const float* token_embedding = nullptr;  // [vocab, dim]
    const float* rms_att = nullptr;          // [layers, dim]
    const float* wq = nullptr;               // [layers, dim, dim]
    const float* wk = nullptr;               // [layers, kv_dim, dim]
    const float* wv = nullptr;               // [layers, kv_dim, dim]
    const float* wo = nullptr;               // [layers, dim, dim]
    const float* rms_ffn = nullptr;          // [layers, dim]
    const float* w1 = nullptr;               // [layers, hidden, dim]
    const float* w2 = nullptr;               // [layers, dim, hidden]
    const float* w3 = nullptr;               // [layers, hidden, dim]
    const float* rms_final = nullptr;        // [dim]
    const float* wcls = nullptr;             // [vocab, dim]; token_embedding when shared
    // ModelConfig::qkv_bias (Qwen2), else null: added to q, k and v after their projections.
    const float* bq = nullptr;  // [layers, dim]
    const float* bk = nullptr;  // [layers, kv_dim]
    const float* bv = nullptr;  // [layers, kv_dim]
    // GPT-2 only (ModelConfig::gpt2()), else null. Its LayerNorms' gains are rms_att (ln_1),
    // rms_ffn (ln_2) and rms_final (ln_f); its MLP is w1 (c_fc, [layers, hidden, dim]) and
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

// Maps the file read-only and validates it in place: nothing is copied, the weights point into
// the mapping (shared with the page cache; see core/mapped_file.h).
// Throws kvs::Error with a one-line message naming `path` on any problem: missing or unreadable
// file, a header that is not a sane model, a size that differs from what the header implies.
// `weights` other than F32: the matrices converted to that type as well (core/compact_weights.h),
// and the mapping's pages of those matrices let go once converted. `before_read`, when given,
// sees the mapped and checked checkpoint before any weight is read or converted (the loader's
// context cut and memory check: it may change the config's seq_len, or throw).
Checkpoint load_checkpoint(const std::string& path, GgmlType weights = GgmlType::F32,
                           const std::function<void(Checkpoint&)>& before_read = {});

// The same from bytes already in memory (for fuzzing and tests), copied into a float array
// (the bytes need not be aligned); `name` is used in messages.
Checkpoint parse_checkpoint(const unsigned char* data, std::size_t size, const std::string& name);

}  // namespace kvs
