// Qwen2 (Qwen2ForCausalLM, GGUF `qwen2`): Llama with biases on q, k and v, and a sliding window
// kvscope does not have. Its GGUF q/k rows stay in the rotate-half order of its NEOX RoPE
// (llama.cpp's converter permutes llama's to adjacent pairs, not qwen2's).
#include "core/loaders/arch_llama.h"

namespace kvs {
namespace {

using W = LlamaWeights;

// clang-format off
// {GGUF name, HF name, per layer, out, in, the weights it fills, flags}: our shape [out, in].
const TensorRow kTensors[] = {
    {"token_embd.weight",  "model.embed_tokens.weight",       false, Side::vocab,  Side::dim,    {&W::token_embedding}},
    {"attn_norm.weight",   "input_layernorm.weight",          true,  Side::dim,    Side::one,    {&W::norm_att}},
    {"attn_q.weight",      "self_attn.q_proj.weight",         true,  Side::dim,    Side::dim,    {&W::wq},             kRopeRows},
    {"attn_k.weight",      "self_attn.k_proj.weight",         true,  Side::kv_dim, Side::dim,    {&W::wk},             kRopeRows},
    {"attn_v.weight",      "self_attn.v_proj.weight",         true,  Side::kv_dim, Side::dim,    {&W::wv}},
    {"attn_output.weight", "self_attn.o_proj.weight",         true,  Side::dim,    Side::dim,    {&W::wo}},
    {"ffn_norm.weight",    "post_attention_layernorm.weight", true,  Side::dim,    Side::one,    {&W::norm_ffn}},
    {"ffn_gate.weight",    "mlp.gate_proj.weight",            true,  Side::hidden, Side::dim,    {&W::w1}},
    {"ffn_down.weight",    "mlp.down_proj.weight",            true,  Side::dim,    Side::hidden, {&W::w2}},
    {"ffn_up.weight",      "mlp.up_proj.weight",              true,  Side::hidden, Side::dim,    {&W::w3}},
    {"output_norm.weight", "model.norm.weight",               false, Side::dim,    Side::one,    {&W::norm_final}},
    {"output.weight",      "lm_head.weight",                  false, Side::vocab,  Side::dim,    {&W::wcls},           kClassifier},
    // After llama's tensors, as point_llama_weights takes them.
    {"attn_q.bias",        "self_attn.q_proj.bias",           true,  Side::dim,    Side::one,    {&W::bq},             kRopeRows},
    {"attn_k.bias",        "self_attn.k_proj.bias",           true,  Side::kv_dim, Side::one,    {&W::bk},             kRopeRows},
    {"attn_v.bias",        "self_attn.v_proj.bias",           true,  Side::kv_dim, Side::one,    {&W::bv}},
};
// clang-format on

void qwen2_hf_refusals(const nlohmann::json& j, const Refuse& fail) {
    if (const auto it = j.find("use_sliding_window"); it != j.end() && *it == true)
        fail("use_sliding_window is true (kvscope's attention sees every earlier token)");
    llama_hf_refusals(j, fail);
}

}  // namespace

const ArchTable& qwen2_arch() {
    static const ArchTable t{
        .arch = Architecture::Llama,
        .gguf_name = "qwen2",
        .hf_class = "Qwen2ForCausalLM",
        .hf_model_type = "qwen2",
        .gguf_label = "llama",
        .hf_label = "Llama",
        .hf_owner = "Qwen2ForCausalLM model",
        .norm = NormKind::rms,
        .positions = PositionKind::rope,
        .ffn = FfnKind::swiglu,
        .qkv_bias = true,
        .tied_default = false,
        .gguf_rope_rows = true,
        .float32_only = false,
        .hf_type_names_it = false,
        .ints = kLlamaInts,
        .floats = kLlamaFloats,
        .tensors = kTensors,
        .hf_layer = "model.layers.",
        .hf_prefix = "",
        .hf_ignored_per_layer = {},
        .hf_ignored_suffix = ".inv_freq",
        .gguf_side_tensor = "rope_freqs.weight",
        .gguf_note = ", dequantised to float32 on load",
        .hf_note = ", q/k rows put back in llama2.c's RoPE order, float32 on load",
        .hf_act_key = "hidden_act",
        .hf_act_value = "silu",
        .hf_refusals = qwen2_hf_refusals,
        .hf_shapes = llama_hf_shapes,
        .gguf_shapes = llama_gguf_shapes,
        .hf_checked = llama_hf_checked,
        .gguf_checked = llama_gguf_checked,
        .hf_write = llama_hf_write,
    };
    return t;
}

}  // namespace kvs
