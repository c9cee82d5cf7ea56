#pragma once
// Reader for llama2.c checkpoints (the legacy "version 0" layout that run.c maps):
// a 7 x int32 header, then float32 tensors in a fixed order. Everything is validated before use.
#include <cstddef>
#include <functional>
#include <string>

#include "core/model/compact_weights.h"
#include "core/model/llama_weights.h"
#include "core/model/model_config.h"

namespace kvs {

// Points the views of `w` into `p`: floats in llama2.c's order (the file's, after the header),
// with or without the unused freq_cis block llama2.c stores before a separate classifier.
// GPT-2 (no llama2.c file holds one; the loaders' copies do): token and position embeddings,
// then per tensor kind over the layers ln_1 gain and bias, wq, wk, wv, bq, bk, bv, wo, bo,
// ln_2 gain and bias, w1, b1, w2, b2; then ln_f gain and bias, and the classifier when separate
// (ModelConfig::stored_floats counts the same; with_freq_cis is ignored).
void point_llama_weights(LlamaWeights& w, const float* p, const ModelConfig& c, bool with_freq_cis);

// Maps the file read-only and validates it in place: nothing is copied, the weights point into
// the mapping (shared with the page cache; see core/files/mapped_file.h).
// Throws kvs::Error with a one-line message naming `path` on any problem: missing or unreadable
// file, a header that is not a sane model, a size that differs from what the header implies.
// `weights` other than F32: the matrices converted to that type as well
// (core/model/compact_weights.h), and the mapping's pages of those matrices let go once converted.
// `before_read`, when given, sees the mapped and checked checkpoint before any weight is read or
// converted (the loader's context cut and memory check: it may change the config's seq_len, or
// throw).
Checkpoint load_checkpoint(const std::string& path, GgmlType weights = GgmlType::F32,
                           const std::function<void(Checkpoint&)>& before_read = {});

// The same from bytes already in memory (for fuzzing and tests), copied into a float array
// (the bytes need not be aligned); `name` is used in messages.
Checkpoint parse_checkpoint(const unsigned char* data, std::size_t size, const std::string& name);

}  // namespace kvs
