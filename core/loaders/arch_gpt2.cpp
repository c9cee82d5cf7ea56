// GPT-2 (GPT2LMHeadModel, GGUF `gpt2`): LayerNorm with biases, a learned position table, a GELU
// MLP (w1 up, w2 down, no w3), biases on every projection, one fused q/k/v matrix split into wq,
// wk, wv (q's part, then k's, then v's), a tied classifier unless config.json says otherwise.
// HF's Conv1D matrices are stored [in, out], the transpose of our [out, in] rows; GGUF's dims are
// [in, out] for every matrix, the same bytes as our rows, so nothing is transposed there. Float32
// weights only.
#include "core/files/json_input.h"
#include "core/loaders/arch_table.h"

namespace kvs {
namespace {

using W = LlamaWeights;

// clang-format off
// {GGUF name, HF name, per layer, out, in, the weights it fills, flags}: our shape [out, in].
const TensorRow kTensors[] = {
    {"token_embd.weight",    "wte.weight",         false, Side::vocab,     Side::dim,    {&W::token_embedding}},
    {"position_embd.weight", "wpe.weight",         false, Side::positions, Side::dim,    {&W::pos_embedding}},
    {"attn_norm.weight",     "ln_1.weight",        true,  Side::dim,       Side::one,    {&W::norm_att}},
    {"attn_norm.bias",       "ln_1.bias",          true,  Side::dim,       Side::one,    {&W::norm_att_bias}},
    {"attn_qkv.weight",      "attn.c_attn.weight", true,  Side::dim3,      Side::dim,    {&W::wq, &W::wk, &W::wv}, kConv1d},
    {"attn_qkv.bias",        "attn.c_attn.bias",   true,  Side::dim3,      Side::one,    {&W::bq, &W::bk, &W::bv}},
    {"attn_output.weight",   "attn.c_proj.weight", true,  Side::dim,       Side::dim,    {&W::wo},                 kConv1d},
    {"attn_output.bias",     "attn.c_proj.bias",   true,  Side::dim,       Side::one,    {&W::bo}},
    {"ffn_norm.weight",      "ln_2.weight",        true,  Side::dim,       Side::one,    {&W::norm_ffn}},
    {"ffn_norm.bias",        "ln_2.bias",          true,  Side::dim,       Side::one,    {&W::norm_ffn_bias}},
    {"ffn_up.weight",        "mlp.c_fc.weight",    true,  Side::hidden,    Side::dim,    {&W::w1},                 kConv1d},
    {"ffn_up.bias",          "mlp.c_fc.bias",      true,  Side::hidden,    Side::one,    {&W::b1}},
    {"ffn_down.weight",      "mlp.c_proj.weight",  true,  Side::dim,       Side::hidden, {&W::w2},                 kConv1d},
    {"ffn_down.bias",        "mlp.c_proj.bias",    true,  Side::dim,       Side::one,    {&W::b2}},
    {"output_norm.weight",   "ln_f.weight",        false, Side::dim,       Side::one,    {&W::norm_final}},
    {"output_norm.bias",     "ln_f.bias",          false, Side::dim,       Side::one,    {&W::norm_final_bias}},
    {"output.weight",        "lm_head.weight",     false, Side::vocab,     Side::dim,    {&W::wcls},               kClassifier},
};
// clang-format on

const IntKey kInts[] = {
    {&ModelConfig::dim, "embedding_length", "n_embd"},
    {&ModelConfig::n_layers, "block_count", "n_layer"},
    {&ModelConfig::n_heads, "attention.head_count", "n_head"},
    {&ModelConfig::n_kv_heads, "attention.head_count_kv", nullptr, Fallback::n_heads,
     Fallback::n_heads},
    // Learned positions: the context is the position table's rows, at most.
    {&ModelConfig::n_positions, "context_length", "n_positions"},
    {&ModelConfig::hidden_dim, "feed_forward_length", "n_inner", Fallback::none,
     Fallback::four_dim},
    {&ModelConfig::vocab_size, nullptr, "vocab_size"},
};
// LayerNorm's epsilon when absent: llama.cpp's and GPT2Config's.
const FloatKey kFloats[] = {
    {&ModelConfig::norm_eps, "attention.layer_norm_epsilon", "layer_norm_epsilon", 1e-5f, 1e-5f},
};
// The causal mask buffers older saves hold (kvscope masks by position).
const char* const kIgnoredPerLayer[] = {"attn.bias", "attn.masked_bias"};

// A config.json switch's value; `fallback` when absent.
bool flag(const nlohmann::json& j, const char* key, bool fallback, const Refuse& fail) {
    const nlohmann::json* v = json_member(j, key);
    if (!v) return fallback;
    if (!v->is_boolean())
        fail(std::string("config.json: ") + key + " = " + json_excerpt(*v, 40) +
             " is not true or false");
    return v->get<bool>();
}

// GPT2Config's switches that change the arithmetic kvscope's forward pass does not have.
void gpt2_hf_refusals(const nlohmann::json& j, const Refuse& fail) {
    if (const auto it = j.find("model_type"); it != j.end() && *it != "gpt2")
        fail("config.json: model_type " + json_excerpt(*it, 40) + " is not \"gpt2\"");
    if (const auto it = j.find("activation_function");
        it != j.end() && *it != "gelu_new" && *it != "gelu_pytorch_tanh")
        fail("activation_function " + json_excerpt(*it, 40) +
             " is not supported (kvscope's GELU is the tanh form: gelu_new, "
             "gelu_pytorch_tanh)");
    for (const char* k :
         {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "add_cross_attention"})
        if (flag(j, k, false, fail))
            fail(std::string(k) + " is true (kvscope's attention is GPT-2's plain one)");
    if (!flag(j, "scale_attn_weights", true, fail))
        fail("scale_attn_weights is false (kvscope scales scores by 1/sqrt(head size))");
}

}  // namespace

const ArchTable& gpt2_arch() {
    static const ArchTable t{
        .arch = Architecture::Gpt2,
        .gguf_name = "gpt2",
        .hf_class = "GPT2LMHeadModel",
        .hf_model_type = "gpt2",
        .gguf_label = "gpt2",
        .hf_label = "GPT-2",
        .hf_owner = "GPT2LMHeadModel",
        .norm = NormKind::layer,
        .positions = PositionKind::learned,
        .ffn = FfnKind::gelu,
        .qkv_bias = true,
        .tied_default = true,
        .gguf_rope_rows = false,
        .float32_only = true,
        .hf_type_names_it = true,
        .ints = kInts,
        .floats = kFloats,
        .tensors = kTensors,
        .hf_layer = "h.",
        .hf_prefix = "transformer.",
        .hf_ignored_per_layer = kIgnoredPerLayer,
        .hf_ignored_suffix = nullptr,
        .gguf_side_tensor = nullptr,
        .gguf_note = ", q/k/v split from attn_qkv, dequantised to float32 on load",
        .hf_note = ", Conv1D matrices transposed, q/k/v split from c_attn, float32 on load",
        .hf_act_key = "activation_function",
        .hf_act_value = "gelu_new",
        .hf_refusals = gpt2_hf_refusals,
        .hf_shapes = nullptr,
        .gguf_shapes = nullptr,
        .hf_checked = nullptr,
        .gguf_checked = nullptr,
        .hf_write = nullptr,
    };
    return t;
}

}  // namespace kvs
