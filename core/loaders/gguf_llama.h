#pragma once
// A GGUF file of an architecture kvscope has a table for (`llama`, `qwen2`, `gpt2`:
// core/loaders/arch_table.h) as a TransformerModel, read by the one loader pipeline
// (core/loaders/load_pipeline.h): shapes from the "<arch>.*" metadata, the tensors checked against
// the table, and the tokenizer from tokenizer.ggml.* (core/tokenizers/gguf_tokenizer.h). By default
// the matrices (and a quantised embedding table) are kept in the file's own types, used in place in
// the mapping (core/model/compact_weights.h); `weights` F32 dequantises everything into float32 in
// llama2.c's weight order, another type converts the matrices to it. The norms are float32 either
// way. An architecture that runs float32 weights only (gpt2) is dequantised as stored.
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
    std::unique_ptr<Tokenizer> tok;  // core/tokenizers/gguf_tokenizer.h: SentencePiece or byte BPE
    std::vector<int> stop;           // EOS, then BOS
    std::string format;  // "GGUF v3, llama, tensors: 11 F32 35 Q8_0, matrices kept as stored ..."
};

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
                           WeightsWanted weights = std::nullopt,
                           std::shared_ptr<const void> keep = nullptr);

// The model of a parsed file: generation stops at its EOS or BOS.
std::unique_ptr<Model> make_gguf_model(GgufLlama g, const std::string& model_name);

// Maps `path` read-only, parses it, and keeps of the mapping only what compact matrices use.
std::unique_ptr<Model> load_gguf_model(const std::string& path, const std::string& model_name,
                                       const OpenLimits& limits = {},
                                       WeightsWanted weights = std::nullopt);

}  // namespace kvs
