#pragma once
// GPT-2 as a Hugging Face GPT2LMHeadModel folder, both ways. config.json (model_type "gpt2"):
// n_embd, n_layer, n_head, n_positions, n_inner (null or absent: 4 x n_embd), vocab_size,
// layer_norm_epsilon (1e-5), activation_function (the tanh GELU: gelu_new or gelu_pytorch_tanh),
// tie_word_embeddings (true). Safetensors names, with or without a "transformer." prefix
// (openai-community/gpt2 has none, a transformers save has it):
//   wte.weight [V, d], wpe.weight [n_positions, d], h.N.ln_1.weight/.bias [d],
//   h.N.attn.c_attn.weight [d, 3d] (q's d columns, then k's, then v's) and .bias [3d],
//   h.N.attn.c_proj.weight [d, d]/.bias [d], h.N.ln_2.weight/.bias [d],
//   h.N.mlp.c_fc.weight [d, hidden]/.bias [hidden], h.N.mlp.c_proj.weight [hidden, d]/.bias [d],
//   ln_f.weight/.bias [d], and lm_head.weight [V, d] (never prefixed) when not tied.
// Those four matrices are Conv1D weights, stored [in, out]: the transpose of our [out, in] rows.
// The attention's mask buffers (h.N.attn.bias, h.N.attn.masked_bias) older saves hold are
// ignored.
#include <string>
#include <string_view>
#include <vector>

#include "core/loaders/hf_llama.h"

namespace kvs {

// parse_hf_llama's reader for a config.json of GPT2LMHeadModel (same contract: everything checked
// before a tensor's bytes are read, one-line kvs::Error naming `name`). Conv1D matrices are
// transposed and the fused q/k/v split into wq, wk, wv and bq, bk, bv. Float32 weights only:
// `weights` other than F32 is refused.
HfLlama parse_hf_gpt2(std::string_view config_json, const std::vector<SafetensorsFile>& shards,
                      const std::string& name, const OpenLimits& limits, GgmlType weights,
                      const ShardDoneWith& done_with);

// A GPT-2 model's tensors as a transformers save names and shapes them ("transformer." prefix,
// Conv1D matrices [in, out], lm_head.weight only when not tied), every one as `type` (F32, F16
// or BF16).
std::vector<SafeTensorOut> hf_gpt2_tensors(const ModelConfig& c, const LlamaWeights& w,
                                           GgmlType type);

}  // namespace kvs
