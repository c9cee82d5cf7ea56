#pragma once
// Writes a llama2.c model (checkpoint + tokenizer.bin) as a Hugging Face LlamaForCausalLM folder
// that core/loaders/hf_llama.h reads back: config.json, the weights as safetensors (one file, or
// shards of at most `shard_bytes` listed by model.safetensors.index.json), and tokenizer.bin.
// q_proj and k_proj rows are written in HF's rotate-half order (rotate_half_row); the other
// matrices are llama2.c's [out, in] rows as they are; a shared classifier means tie_word_embeddings
// and no lm_head.weight. A model with q/k/v biases is written as Qwen2ForCausalLM, a GPT-2 one
// (ModelConfig::gpt2()) as GPT2LMHeadModel ("transformer."-prefixed names, Conv1D matrices
// [in, out], q/k/v fused). Names, order and config.json keys are the architecture's table's
// (core/loaders/arch_table.h).
#include <cstdint>
#include <string>

#include "core/files/gguf_file.h"
#include "core/loaders/checkpoint.h"
#include "core/tokenizers/bpe_tokenizer.h"

namespace kvs {

// `type`: F32, F16 or BF16 for every tensor (HF keeps one dtype). `folder` is created when absent;
// an existing folder must not hold a config.json (a model of the user's is never overwritten).
// Every file goes through core/util/output_file.h. Throws kvs::Error naming the path.
void write_hf_llama(const std::string& folder, const ModelConfig& c, const LlamaWeights& w,
                    const BpeTokenizer& tok, GgmlType type, std::uint64_t shard_bytes = 0);

// A float32 hyper-parameter as config.json's number: its shortest decimal (1e-05, not the
// double 9.99999974737875e-06), which reads back as the same float. (The fewest %g digits that
// read back as v: the web build's libc++ has no float to_chars.)
double config_number(float v);

}  // namespace kvs
