#include "core/loaders/hf_gpt2.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/files/gguf_file.h"
#include "core/files/json_input.h"
#include "core/files/mapped_file.h"
#include "core/model/compact_weights.h"
#include "core/util/checked.h"
#include "core/util/error.h"

namespace kvs {
namespace {

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
    throw Error(name + ": Hugging Face GPT-2 model: " + why);
}

std::string shape_text(const std::vector<std::uint64_t>& s) {
    std::string t = "[";
    for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
}

// One tensor and where its values go. A Conv1D weight is transposed first (file [in, out] to our
// [out, in]); then the values are split into to.size() equal consecutive parts (c_attn: q's,
// k's, v's), each at its own place in the weights.
struct Slot {
    std::string name;                  // without the "transformer." prefix
    std::vector<std::uint64_t> shape;  // as stored
    bool conv1d = false;
    std::vector<const float*> to;  // empty when no weights were given
};

using View = const float* LlamaWeights::*;

// Every tensor of a GPT2LMHeadModel of shapes `c`; `w` (when given) says where each one's values
// are in our weights. The one statement of the layout: the reader copies into these places, the
// writer reads from them.
std::vector<Slot> gpt2_slots(const ModelConfig& c, const LlamaWeights* w) {
    const std::uint64_t d = c.dim, hd = c.hidden_dim, V = c.vocab_size;
    std::vector<Slot> slots;
    auto add = [&](std::string n, std::vector<std::uint64_t> shape, bool conv1d,
                   std::initializer_list<std::pair<View, std::uint64_t>> to) {
        Slot s{std::move(n), std::move(shape), conv1d, {}};
        if (w)
            for (const auto& [view, off] : to) s.to.push_back(w->*view + off);
        slots.push_back(std::move(s));
    };
    add("wte.weight", {V, d}, false, {{&LlamaWeights::token_embedding, 0}});
    add("wpe.weight", {std::uint64_t(c.n_positions), d}, false,
        {{&LlamaWeights::pos_embedding, 0}});
    for (std::uint64_t l = 0; l < std::uint64_t(c.n_layers); ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        add(h + "ln_1.weight", {d}, false, {{&LlamaWeights::rms_att, l * d}});
        add(h + "ln_1.bias", {d}, false, {{&LlamaWeights::norm_att_bias, l * d}});
        add(h + "attn.c_attn.weight", {d, 3 * d}, true,
            {{&LlamaWeights::wq, l * d * d},
             {&LlamaWeights::wk, l * d * d},
             {&LlamaWeights::wv, l * d * d}});
        add(h + "attn.c_attn.bias", {3 * d}, false,
            {{&LlamaWeights::bq, l * d}, {&LlamaWeights::bk, l * d}, {&LlamaWeights::bv, l * d}});
        add(h + "attn.c_proj.weight", {d, d}, true, {{&LlamaWeights::wo, l * d * d}});
        add(h + "attn.c_proj.bias", {d}, false, {{&LlamaWeights::bo, l * d}});
        add(h + "ln_2.weight", {d}, false, {{&LlamaWeights::rms_ffn, l * d}});
        add(h + "ln_2.bias", {d}, false, {{&LlamaWeights::norm_ffn_bias, l * d}});
        add(h + "mlp.c_fc.weight", {d, hd}, true, {{&LlamaWeights::w1, l * hd * d}});
        add(h + "mlp.c_fc.bias", {hd}, false, {{&LlamaWeights::b1, l * hd}});
        add(h + "mlp.c_proj.weight", {hd, d}, true, {{&LlamaWeights::w2, l * d * hd}});
        add(h + "mlp.c_proj.bias", {d}, false, {{&LlamaWeights::b2, l * d}});
    }
    add("ln_f.weight", {d}, false, {{&LlamaWeights::rms_final, 0}});
    add("ln_f.bias", {d}, false, {{&LlamaWeights::norm_final_bias, 0}});
    if (!c.shared_classifier) add("lm_head.weight", {V, d}, false, {{&LlamaWeights::wcls, 0}});
    return slots;
}

// [rows, cols] row-major at `in` as [cols, rows] at `out`, in 64 x 64 tiles so that both sides
// stay in cache.
void transpose(const float* in, std::size_t rows, std::size_t cols, float* out) {
    constexpr std::size_t kTile = 64;
    for (std::size_t r0 = 0; r0 < rows; r0 += kTile)
        for (std::size_t c0 = 0; c0 < cols; c0 += kTile)
            for (std::size_t r = r0; r < std::min(rows, r0 + kTile); ++r)
                for (std::size_t c = c0; c < std::min(cols, c0 + kTile); ++c)
                    out[c * rows + r] = in[r * cols + c];
}

}  // namespace

HfLlama parse_hf_gpt2(std::string_view config_json, const std::vector<SafetensorsFile>& shards,
                      const std::string& name, const OpenLimits& limits, GgmlType weights,
                      const ShardDoneWith& done_with) {
    const auto j = parse_json_input(config_json, name + ": config.json");
    if (!j.is_object()) refuse(name, "config.json is not a JSON object");
    if (weights != GgmlType::F32)
        refuse(name, "--weights " + weight_type_option_name(weights) +
                         ": the gpt2 architecture runs with float32 weights only");
    const std::string model = name + ": Hugging Face GPT-2 model";
    // A key's integer value, refused by name when absent (no fallback) or out of range.
    auto int_of = [&](const char* key, int fallback = -1) {
        const nlohmann::json* v = json_member(j, key);
        if (!v) {
            if (fallback < 0) refuse(name, std::string("config.json has no ") + key);
            return fallback;
        }
        return int(json_int(*v, 0, 1 << 30, {model, std::string("config.json: ") + key}));
    };
    auto flag = [&](const char* key, bool fallback) {
        const nlohmann::json* v = json_member(j, key);
        if (!v) return fallback;
        if (!v->is_boolean())
            refuse(name, std::string("config.json: ") + key + " = " + json_excerpt(*v, 40) +
                             " is not true or false");
        return v->get<bool>();
    };
    if (const auto it = j.find("model_type"); it != j.end() && *it != "gpt2")
        refuse(name, "config.json: model_type " + json_excerpt(*it, 40) + " is not \"gpt2\"");
    // GPT2Config's switches that change the arithmetic kvscope's forward pass does not have.
    if (const auto it = j.find("activation_function");
        it != j.end() && *it != "gelu_new" && *it != "gelu_pytorch_tanh")
        refuse(name, "activation_function " + json_excerpt(*it, 40) +
                         " is not supported (kvscope's GELU is the tanh form: gelu_new, "
                         "gelu_pytorch_tanh)");
    for (const char* k :
         {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "add_cross_attention"})
        if (flag(k, false))
            refuse(name, std::string(k) + " is true (kvscope's attention is GPT-2's plain one)");
    if (!flag("scale_attn_weights", true))
        refuse(name, "scale_attn_weights is false (kvscope scales scores by 1/sqrt(head size))");

    ModelConfig c;
    c.arch = Architecture::Gpt2;
    c.qkv_bias = true;
    c.dim = int_of("n_embd");
    c.n_layers = int_of("n_layer");
    c.n_heads = c.n_kv_heads = int_of("n_head");
    c.n_positions = int_of("n_positions");
    c.hidden_dim = int_of("n_inner", c.dim <= (1 << 20) ? 4 * c.dim : 0);  // validate names dim
    c.vocab_size = int_of("vocab_size");
    if (const nlohmann::json* v = json_member(j, "layer_norm_epsilon")) {
        if (!v->is_number())
            refuse(name, "config.json: layer_norm_epsilon = " + json_excerpt(*v, 40) +
                             " is not a number");
        c.norm_eps = to_float(v->get<double>());  // validate bounds it
    }
    c.shared_classifier = flag("tie_word_embeddings", true);  // GPT2Config's default
    if (c.n_positions == 0)
        refuse(name, "n_positions is 0 (the position table needs a row per position)");
    // The context the user chose, when shorter than the position table: the KV cache is
    // allocated for that, not more.
    std::string context_note;
    c.seq_len = session_context(c.n_positions, limits.context, context_note);
    cut_context_to_kv_bound(c, context_note);
    c.validate(name, "Hugging Face model");

    // Every tensor of every shard, by name: a name twice is refused.
    std::map<std::string, const SafeTensor*> all;
    for (const auto& s : shards)
        for (const auto& t : s.tensors())
            if (!all.emplace(t.name, &t).second)
                refuse(name, "tensor '" + t.name + "' is in two shards");
    const std::string prefix = all.count("transformer.wte.weight") ? "transformer." : "";
    auto file_name = [&](const std::string& n) { return n == "lm_head.weight" ? n : prefix + n; };
    std::set<std::string> used;
    std::map<std::string, int> type_counts;
    for (const Slot& s : gpt2_slots(c, nullptr)) {
        const std::string n = file_name(s.name);
        const auto it = all.find(n);
        if (it == all.end()) refuse(name, "no tensor '" + n + "'");
        if (it->second->shape != s.shape)
            refuse(name, "tensor '" + n + "' is " + shape_text(it->second->shape) +
                             ", the shapes (" + c.describe() + ") need " + shape_text(s.shape));
        used.insert(n);
        ++type_counts[ggml_type_name(it->second->type)];
    }
    // The causal mask buffers older saves hold (kvscope masks by position), and a tied
    // classifier's copy of wte.
    for (int l = 0; l < c.n_layers; ++l)
        for (const char* b : {".attn.bias", ".attn.masked_bias"})
            used.insert(prefix + "h." + std::to_string(l) + b);
    if (c.shared_classifier) used.insert("lm_head.weight");
    for (const auto& [n, t] : all)
        if (!used.count(n))
            refuse(name, "tensor '" + n.substr(0, 80) +
                             "' is not one of a GPT2LMHeadModel's that kvscope runs");

    check_fits(name, std::uint64_t(c.stored_floats()) * sizeof(float), c, limits);

    std::shared_ptr<float[]> copy = zeroed_floats(c.stored_floats());
    HfLlama h;
    h.ck.config = c;
    point_llama_weights(h.ck.weights, copy.get(), c, false);
    auto writable = [&](const float* p) { return copy.get() + (p - copy.get()); };
    std::vector<float> file_order, ours;
    for (const Slot& s : gpt2_slots(c, &h.ck.weights)) {
        const SafeTensor& t = *all.at(file_name(s.name));
        const std::size_t n = t.elements, bytes = ggml_row_bytes(t.type, n);
        if (!s.conv1d && s.to.size() == 1) {
            dequantize_values(t.type, t.data, n, writable(s.to[0]));
        } else {
            file_order.resize(n);
            dequantize_values(t.type, t.data, n, file_order.data());
            const float* values = file_order.data();
            if (s.conv1d) {  // [in, out] to [out, in]
                ours.resize(n);
                transpose(file_order.data(), t.shape[0], t.shape[1], ours.data());
                values = ours.data();
            }
            const std::size_t part = n / s.to.size();
            for (std::size_t i = 0; i < s.to.size(); ++i)
                std::copy_n(values + i * part, part, writable(s.to[i]));
        }
        if (done_with) done_with(t.data, bytes);
    }
    h.ck.weights.owner = std::move(copy);
    for (auto [key, out] : {std::pair{"bos_token_id", &h.bos}, std::pair{"eos_token_id", &h.eos}})
        if (const auto it = j.find(key); it != j.end() && it->is_number_unsigned() &&
                                         it->get<std::uint64_t>() < std::uint64_t(c.vocab_size))
            *out = int(it->get<std::uint64_t>());
    h.format = "Hugging Face GPT2LMHeadModel, " + std::to_string(shards.size()) +
               (shards.size() == 1 ? " safetensors file" : " safetensors shards") + ", tensors:";
    for (const auto& [type, count] : type_counts)
        h.format.append(" ").append(std::to_string(count)).append(" ").append(type);
    h.format += ", Conv1D matrices transposed, q/k/v split from c_attn, float32 on load";
    h.format += context_note;
    return h;
}

std::vector<SafeTensorOut> hf_gpt2_tensors(const ModelConfig& c, const LlamaWeights& w,
                                           GgmlType type) {
    const std::size_t value_bytes = ggml_row_bytes(type, 1);
    std::vector<SafeTensorOut> out;
    std::vector<float> ours, file_order;
    for (const Slot& s : gpt2_slots(c, &w)) {
        std::size_t n = 1;
        for (auto x : s.shape) n *= x;
        const std::size_t part = n / s.to.size();
        ours.clear();  // our order: q's part, k's, v's for c_attn
        for (const float* p : s.to) ours.insert(ours.end(), p, p + part);
        const float* values = ours.data();
        if (s.conv1d) {  // our [out, in] to the file's [in, out]
            file_order.resize(n);
            transpose(ours.data(), s.shape[1], s.shape[0], file_order.data());
            values = file_order.data();
        }
        SafeTensorOut t{s.name == "lm_head.weight" ? s.name : "transformer." + s.name, type,
                        s.shape, std::string(n * value_bytes, '\0')};
        encode_values(type, values, n, reinterpret_cast<unsigned char*>(t.bytes.data()));
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace kvs
