// Llama (LlamaForCausalLM, GGUF `llama`): RMSNorm, RoPE, SwiGLU FFN, no biases. GGUF keeps q/k
// rows in llama2.c's adjacent-pair order (llama.cpp's converter permutes them); HF keeps them in
// the rotate-half order.
#include <vector>

#include "core/files/gguf_file.h"
#include "core/files/json_input.h"
#include "core/loaders/arch_llama.h"
#include "core/loaders/hf_writer.h"
#include "core/model/rope_frequencies.h"
#include "core/util/checked.h"
#include "core/util/error.h"

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
};
// clang-format on

const IntKey kLlamaInts[7] = {
    {&ModelConfig::dim, "embedding_length", "hidden_size"},
    {&ModelConfig::hidden_dim, "feed_forward_length", "intermediate_size"},
    {&ModelConfig::n_layers, "block_count", "num_hidden_layers"},
    {&ModelConfig::n_heads, "attention.head_count", "num_attention_heads"},
    {&ModelConfig::n_kv_heads, "attention.head_count_kv", "num_key_value_heads", Fallback::n_heads,
     Fallback::n_heads},
    {&ModelConfig::vocab_size, nullptr, "vocab_size"},
    {&ModelConfig::seq_len, "context_length", "max_position_embeddings"},
};
// RoPE's base and RMSNorm's epsilon when absent: llama.cpp's (10000, 1e-5) and LlamaConfig's
// (10000, 1e-6); ModelConfig::validate bounds both.
const FloatKey kLlamaFloats[2] = {
    {&ModelConfig::norm_eps, "attention.layer_norm_rms_epsilon", "rms_norm_eps", 1e-5f, 1e-6f},
    {&ModelConfig::rope_theta, "rope.freq_base", "rope_theta", 10000.0f, 10000.0f},
};

}  // namespace

const ArchTable& llama_arch() {
    static const ArchTable t{
        .arch = Architecture::Llama,
        .gguf_name = "llama",
        .hf_class = "LlamaForCausalLM",
        .hf_model_type = "llama",
        .gguf_label = "llama",
        .hf_label = "Llama",
        .hf_owner = "LlamaForCausalLM model",
        .norm = NormKind::rms,
        .positions = PositionKind::rope,
        .ffn = FfnKind::swiglu,
        .qkv_bias = false,
        .tied_default = false,
        .gguf_rope_rows = false,
        .float32_only = false,
        .hf_type_names_it = false,
        .ints = kLlamaInts,
        .floats = kLlamaFloats,
        .tensors = kTensors,
        .hf_layer = "model.layers.",
        .hf_prefix = "",
        .hf_ignored_per_layer = {},
        // Older exports store RoPE's frequencies; kvscope computes them.
        .hf_ignored_suffix = ".inv_freq",
        .gguf_side_tensor = "rope_freqs.weight",
        .gguf_note = ", dequantised to float32 on load",
        .hf_note = ", q/k rows put back in llama2.c's RoPE order, float32 on load",
        .hf_act_key = "hidden_act",
        .hf_act_value = "silu",
        .hf_refusals = llama_hf_refusals,
        .hf_shapes = llama_hf_shapes,
        .gguf_shapes = llama_gguf_shapes,
        .hf_checked = llama_hf_checked,
        .gguf_checked = llama_gguf_checked,
        .hf_write = llama_hf_write,
    };
    return t;
}

void llama_hf_refusals(const nlohmann::json& j, const Refuse& fail) {
    for (const char* k : {"attention_bias", "mlp_bias"})
        if (const auto it = j.find(k); it != j.end() && *it == true)
            fail(std::string(k) + " is true (kvscope's Llama forward pass has no biases)");
    if (const auto it = j.find("hidden_act"); it != j.end() && *it != "silu")
        fail("hidden_act " + json_excerpt(*it, 40) + " is not supported (kvscope's FFN is SwiGLU)");
}

void llama_hf_shapes(const nlohmann::json& j, ModelConfig& c, const Refuse& fail) {
    // head_dim x heads as the file's numbers say, exactly (ints would wrap past 2^31 and could
    // land on hidden_size).
    const nlohmann::json* v = json_member(j, "head_dim");
    if (!v || c.n_heads <= 0) return;
    const std::uint64_t head_dim =
        std::uint64_t(json_int(*v, 0, 1 << 30, {fail.label, "config.json: head_dim"}));
    const std::uint64_t all =
        checked_mul(head_dim, std::uint64_t(c.n_heads),
                    {fail.label, "config.json: head_dim x num_attention_heads"});
    if (all != std::uint64_t(c.dim))
        fail("head_dim " + std::to_string(head_dim) + " x " + std::to_string(c.n_heads) +
             " heads is " + std::to_string(all) + ", not hidden_size " + std::to_string(c.dim));
}

namespace {

// rope_scaling's number `key`; `fallback` when absent and not negative.
double rope_param(const nlohmann::json& rs, const char* key, double fallback, const Refuse& fail) {
    const nlohmann::json* p = json_member(rs, key);
    if (!p) {
        if (fallback >= 0) return fallback;
        fail(std::string("rope_scaling has no ") + key);
    }
    if (!p->is_number())
        fail(std::string("rope_scaling: ") + key + " = " + json_excerpt(*p, 40) +
             " is not a number");
    return p->get<double>();
}

}  // namespace

void llama_hf_checked(const nlohmann::json& j, ModelConfig& c, const Refuse& fail,
                      const std::string& name) {
    if (c.head_dim() % 2) fail("the head size " + std::to_string(c.head_dim()) + " is odd");
    // Rope scaling: "linear" (every frequency divided by factor) and Llama 3's ("llama3");
    // the others (dynamic NTK, YaRN, LongRoPE) change more than the frequencies and are refused.
    const auto it = j.find("rope_scaling");
    if (it == j.end() || it->is_null()) return;
    if (!it->is_object()) fail("config.json: rope_scaling is not an object");
    const auto& rs = *it;
    std::string type = "?";
    for (const char* k : {"rope_type", "type"})  // transformers' name, then the older one
        if (const auto t = rs.find(k); t != rs.end() && t->is_string()) {
            type = t->get<std::string>();
            break;
        }
    if (type == "linear") {
        const double factor = rope_param(rs, "factor", -1, fail);
        if (!(factor >= 1 && factor <= 1e6))
            fail("rope_scaling: linear factor " + json_excerpt(factor) +
                 " is not usable (1 to 1e6)");
        c.rope_factors.assign(c.head_dim() / 2, static_cast<float>(factor));
    } else if (type == "llama3") {
        // One at a time, so a missing one is named in this order.
        const double factor = rope_param(rs, "factor", -1, fail),
                     low = rope_param(rs, "low_freq_factor", -1, fail),
                     high = rope_param(rs, "high_freq_factor", -1, fail),
                     original = rope_param(rs, "original_max_position_embeddings", -1, fail);
        try {
            c.rope_factors =
                llama3_rope_factors(c.head_dim(), c.rope_theta, factor, low, high, original);
        } catch (const Error& e) {
            fail(e.what());
        }
    } else if (type != "default") {
        fail("rope_scaling type '" + type.substr(0, 40) +
             "' is not supported (kvscope reads linear and llama3)");
    }
    c.validate(name, "Hugging Face model");
}

namespace {

std::string dims_text(const std::vector<std::uint64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

}  // namespace

void llama_gguf_shapes(const GgufFile& f, const std::string& key, ModelConfig& c,
                       const Refuse& fail) {
    // Rope scaling: linear (every frequency divided by the factor), or Llama 3's per-pair
    // divisors in the tensor rope_freqs.weight.
    const bool heads_ok = c.dim > 0 && c.n_heads > 0 && c.dim % c.n_heads == 0;
    if (const auto st = f.get_string(key + "rope.scaling.type"); st && *st != "none") {
        if (*st != "linear")
            fail(key + "rope.scaling.type '" + std::string(*st).substr(0, 40) +
                 "' is not supported (kvscope reads none, linear, and rope_freqs)");
        const auto v = f.get_float(key + "rope.scaling.factor");
        const float factor = v ? to_float(*v) : 1.0f;
        if (factor != 1.0f && heads_ok) c.rope_factors.assign(c.head_dim() / 2, factor);
    }
    const GgufTensorInfo* rope_freqs = f.tensor("rope_freqs.weight");
    if (!rope_freqs || !heads_ok) return;
    if (!c.rope_factors.empty()) fail("both linear rope scaling and rope_freqs.weight");
    if (rope_freqs->dims != std::vector<std::uint64_t>{std::uint64_t(c.head_dim() / 2)})
        fail("tensor 'rope_freqs.weight' is " + dims_text(rope_freqs->dims) +
             ", one divisor per RoPE pair needs [" + std::to_string(c.head_dim() / 2) + "]");
    c.rope_factors.resize(c.head_dim() / 2);
    dequantize(*rope_freqs, c.rope_factors.data());
}

void llama_gguf_checked(const GgufFile& f, const std::string& key, const ModelConfig& c,
                        const Refuse& fail) {
    if (const auto rd = f.get_uint(key + "rope.dimension_count");
        rd && *rd != std::uint64_t(c.head_dim()))
        fail(key + "rope.dimension_count = " + std::to_string(*rd) + " is not the head size " +
             std::to_string(c.head_dim()) + " (partial RoPE is not supported)");
}

void llama_hf_write(const ModelConfig& c, nlohmann::ordered_json& config) {
    // Per-pair divisors with no one linear factor are refused by the writer before this.
    config["rope_scaling"] = nullptr;
    if (!c.rope_factors.empty())
        config["rope_scaling"] = {{"rope_type", "linear"},
                                  {"factor", config_number(c.rope_factors[0])}};
}

}  // namespace kvs
