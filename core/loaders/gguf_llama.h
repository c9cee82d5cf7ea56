#pragma once
// A GGUF file of the `llama` architecture as a LlamaModel: shapes from the llama.* metadata, the
// tensors (token_embd, blk.N.attn_q/k/v/output, ffn_gate/down/up, the norms, output_norm and an
// optional output) checked against them, dequantised (F32, F16, BF16, Q8_0, Q4_0) into float32 in
// llama2.c's weight order, and the tokenizer from tokenizer.ggml.*
// (core/tokenizers/gguf_tokenizer.h). With `weights` F16, BF16 or Q8_0 the matrices are kept in
// that type instead (core/model/compact_weights.h): the file's tensors used in place where they
// have it, converted otherwise; the embedding table and norms are float32 either way. A file of the
// `gpt2` architecture is read by core/loaders/gguf_gpt2.h's reader (float32 only), the same way.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/loaders/checkpoint.h"
#include "core/loaders/memory_budget.h"
#include "core/model/model.h"
#include "core/tokenizers/tokenizer.h"

namespace kvs {

struct GgufLlama {
    Checkpoint ck;  // weights: a float32 copy, in llama2.c's order without freq_cis
    std::unique_ptr<Tokenizer>
        tok;                // core/tokenizers/gguf_tokenizer.h: SentencePiece-style or byte-level
    std::vector<int> stop;  // EOS, then BOS
    std::string format;  // "GGUF v3, llama, Q8_0 x 35 + F32 x 11 tensors, dequantised to float32"
};

// True when the file starts with the GGUF magic (the loader decides by content, not by name).
bool is_gguf_file(const std::string& path);

// Validates everything in place first (core/files/gguf_file.h), then dequantises tensor by tensor,
// calling `done_with` on each tensor's bytes once they are copied (load_gguf_model lets those
// pages of the mapping go, so the peak resident set is the float32 copy, not copy + file).
// Throws kvs::Error with one line naming `name` on any problem.
using GgufDoneWith = std::function<void(const unsigned char*, std::size_t)>;
// `limits`: the context is cut to limits.context (when smaller), and the weights as kept plus the
// KV cache at that context must fit every budget (core/loaders/memory_budget.h), checked from the
// shapes before anything is copied or a tensor's bytes are read. `keep` holds `data` for as long as
// compact matrices may point into it.
GgufLlama parse_gguf_llama(const unsigned char* data, std::size_t size, const std::string& name,
                           const GgufDoneWith& done_with = {}, const OpenLimits& limits = {},
                           GgmlType weights = GgmlType::F32,
                           std::shared_ptr<const void> keep = nullptr);

// The model of a parsed file: generation stops at its EOS or BOS.
std::unique_ptr<Model> make_gguf_model(GgufLlama g, const std::string& model_name);

// Maps `path` read-only, parses it, and lets the mapping go once the weights are float32.
std::unique_ptr<Model> load_gguf_model(const std::string& path, const std::string& model_name,
                                       const OpenLimits& limits = {},
                                       GgmlType weights = GgmlType::F32);

}  // namespace kvs
