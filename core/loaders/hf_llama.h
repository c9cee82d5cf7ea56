#pragma once
// A Hugging Face checkpoint (LlamaForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel: the tables of
// core/loaders/arch_table.h, read by the one pipeline of core/loaders/load_pipeline.h) as a
// TransformerModel: a folder holding
// config.json and model.safetensors, or shards listed by model.safetensors.index.json; F32, F16
// or BF16 tensors (core/files/safetensors_file.h), dequantised into float32 in llama2.c's weight
// order, or kept compact with --weights (core/model/compact_weights.h). HF stores q_proj and k_proj
// rows permuted for its rotate-half RoPE (the first half of each head's features rotates with the
// second half); llama2.c's RoPE rotates adjacent pairs. The loader puts the rows back
// (core/loaders/rotate_half.h), so the forward pass is the one run.c has. The tokenizer:
// --tokenizer FILE, else the folder's tokenizer.bin (llama2.c format), else its tokenizer.json
// (byte-level BPE, core/tokenizers/byte_bpe_tokenizer.h). A GPT2LMHeadModel folder runs float32
// weights only; its Conv1D matrices are transposed and its fused q/k/v split on load.
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/files/safetensors_file.h"
#include "core/loaders/checkpoint.h"
#include "core/loaders/memory_budget.h"
#include "core/loaders/rotate_half.h"
#include "core/model/model.h"

namespace kvs {

// The folder `path` names when it is a Hugging Face checkpoint: a folder with config.json, a
// config.json, or a .safetensors file with config.json beside it; empty otherwise.
std::string hf_model_folder(const std::string& path);

struct HfLlama {
    Checkpoint ck;
    std::string format;  // "Hugging Face LlamaForCausalLM, 1 safetensors file, BF16 x 9, ..."
    int bos = -1;        // config.json's bos_token_id / eos_token_id (-1 when absent)
    int eos = -1;
};

// Checks config.json's text and the shards' tensors against each other and the shapes, then
// copies the weights (see the header comment). `limits`: the context is cut to limits.context and
// everything must fit the budgets, checked before a tensor's bytes are read. `keep` holds the
// shards' bytes for as long as compact matrices may point into them. Throws kvs::Error with one
// line naming `name`.
// `done_with` is called with each tensor's bytes once they are copied (or converted), unless
// compact matrices point into them: load_hf_model lets those pages of the mapping go.
using ShardDoneWith = std::function<void(const unsigned char*, std::size_t)>;
HfLlama parse_hf_llama(std::string_view config_json, const std::vector<SafetensorsFile>& shards,
                       const std::string& name, const OpenLimits& limits = {},
                       GgmlType weights = GgmlType::F32, std::shared_ptr<const void> keep = nullptr,
                       const ShardDoneWith& done_with = {});

// Maps the folder's safetensors read-only, parses them, and finds the tokenizer.
std::unique_ptr<Model> load_hf_model(const std::string& path, const std::string& tokenizer,
                                     const OpenLimits& limits = {},
                                     GgmlType weights = GgmlType::F32);

}  // namespace kvs
