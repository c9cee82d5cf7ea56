#include "core/loaders/hf_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/files/gguf_file.h"
#include "core/files/safetensors_file.h"
#include "core/loaders/checkpoint_writer.h"
#include "core/loaders/hf_gpt2.h"
#include "core/loaders/hf_llama.h"
#include "core/util/error.h"
#include "core/util/output_file.h"

namespace kvs {
namespace fs = std::filesystem;
namespace {

// A float32 hyper-parameter as config.json's number: its shortest decimal (1e-05, not the
// double 9.99999974737875e-06), which reads back as the same float.
// (The fewest %g digits that read back as v: the web build's libc++ has no float to_chars.)
double as_written(float v) {
    char buf[32];
    for (int digits = 1; digits < 9; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, double(v));
        if (std::strtof(buf, nullptr) == v) return std::strtod(buf, nullptr);
    }
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return std::strtod(buf, nullptr);
}

// The LlamaForCausalLM (or, with q/k/v biases, Qwen2ForCausalLM) tensors, every one as `type`.
std::vector<SafeTensorOut> llama_tensors(const ModelConfig& c, const LlamaWeights& w,
                                         GgmlType type) {
    const std::size_t d = c.dim, hd = c.hidden_dim, kv = c.kv_dim(), V = c.vocab_size;
    const std::size_t head = c.head_dim(), value_bytes = ggml_row_bytes(type, 1);
    // One tensor: `rows` x `n` floats at p, rows reordered for q and k (a vector: one row of n,
    // or a bias: rows of 1, reordered as its matrix's rows).
    auto tensor = [&](std::string name, const float* p, std::size_t rows, std::size_t n,
                      bool permute) {
        SafeTensorOut t{std::move(name), type, {}, {}};
        t.shape = rows == 1 ? std::vector<std::uint64_t>{n}
                  : n == 1  ? std::vector<std::uint64_t>{rows}
                            : std::vector<std::uint64_t>{rows, n};
        t.bytes.resize(rows * n * value_bytes);
        std::vector<float> hf_order;
        if (permute) {  // q and k rows (and their biases' entries) in HF's rotate-half order
            hf_order.resize(rows * n);
            copy_rotate_half_rows(p, hf_order.data(), rows, n * sizeof(float), head, false);
            p = hf_order.data();
        }
        encode_values(type, p, rows * n, reinterpret_cast<unsigned char*>(t.bytes.data()));
        return t;
    };
    std::vector<SafeTensorOut> all;
    all.push_back(tensor("model.embed_tokens.weight", w.token_embedding, V, d, false));
    for (std::size_t l = 0; l < std::size_t(c.n_layers); ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        all.push_back(tensor(p + "input_layernorm.weight", w.rms_att + l * d, 1, d, false));
        all.push_back(tensor(p + "self_attn.q_proj.weight", w.wq + l * d * d, d, d, true));
        all.push_back(tensor(p + "self_attn.k_proj.weight", w.wk + l * kv * d, kv, d, true));
        all.push_back(tensor(p + "self_attn.v_proj.weight", w.wv + l * kv * d, kv, d, false));
        all.push_back(tensor(p + "self_attn.o_proj.weight", w.wo + l * d * d, d, d, false));
        all.push_back(
            tensor(p + "post_attention_layernorm.weight", w.rms_ffn + l * d, 1, d, false));
        all.push_back(tensor(p + "mlp.gate_proj.weight", w.w1 + l * hd * d, hd, d, false));
        all.push_back(tensor(p + "mlp.down_proj.weight", w.w2 + l * d * hd, d, hd, false));
        all.push_back(tensor(p + "mlp.up_proj.weight", w.w3 + l * hd * d, hd, d, false));
    }
    all.push_back(tensor("model.norm.weight", w.rms_final, 1, d, false));
    if (!c.shared_classifier) all.push_back(tensor("lm_head.weight", w.wcls, V, d, false));
    if (c.qkv_bias)  // Qwen2's q/k/v biases
        for (std::size_t l = 0; l < std::size_t(c.n_layers); ++l) {
            const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
            all.push_back(tensor(p + "q_proj.bias", w.bq + l * d, d, 1, true));
            all.push_back(tensor(p + "k_proj.bias", w.bk + l * kv, kv, 1, true));
            all.push_back(tensor(p + "v_proj.bias", w.bv + l * kv, kv, 1, false));
        }
    return all;
}

}  // namespace

void write_hf_llama(const std::string& folder, const ModelConfig& c, const LlamaWeights& w,
                    const BpeTokenizer& tok, GgmlType type, std::uint64_t shard_bytes) {
    if (type != GgmlType::F32 && type != GgmlType::F16 && type != GgmlType::BF16)
        throw Error(folder + ": a Hugging Face folder holds F32, F16 or BF16 tensors, not " +
                    ggml_type_name(type));
    // config.json states rope scaling by its parameters; per-pair divisors (Llama 3's, read from
    // a GGUF's rope_freqs) are written only when they are one linear factor.
    const auto& rf = c.rope_factors;
    const bool linear =
        !rf.empty() && std::all_of(rf.begin(), rf.end(), [&](float f) { return f == rf[0]; });
    if (!rf.empty() && !linear)
        throw Error(folder +
                    ": per-pair rope scaling factors have no config.json form (export --gguf "
                    "writes them)");
    const fs::path dir(folder);
    std::error_code ec;
    if (fs::exists(dir / "config.json", ec))
        throw Error(folder + ": already holds a config.json (a model is never overwritten)");
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir, ec))
        throw Error(folder + ": cannot create the folder (" + ec.message() + ")");

    std::vector<SafeTensorOut> all =
        c.gpt2() ? hf_gpt2_tensors(c, w, type) : llama_tensors(c, w, type);

    // Shards: tensors in order, a new shard when the next would pass shard_bytes.
    std::vector<std::vector<SafeTensorOut>> shards(1);
    std::uint64_t in_shard = 0;
    for (auto& t : all) {
        if (shard_bytes && in_shard && in_shard + t.bytes.size() > shard_bytes) {
            shards.emplace_back();
            in_shard = 0;
        }
        in_shard += t.bytes.size();
        shards.back().push_back(std::move(t));
    }
    nlohmann::ordered_json map = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < shards.size(); ++i) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
        const std::string file = shards.size() == 1 ? "model.safetensors" : name;
        for (const auto& t : shards[i]) map[t.name] = file;
        write_output_file((dir / file).string(), safetensors_bytes(shards[i]));
    }
    if (shards.size() > 1)
        write_output_file((dir / "model.safetensors.index.json").string(),
                          nlohmann::ordered_json{{"metadata", nlohmann::ordered_json::object()},
                                                 {"weight_map", map}}
                              .dump(2));

    const char* dtype = type == GgmlType::F32   ? "float32"
                        : type == GgmlType::F16 ? "float16"
                                                : "bfloat16";
    nlohmann::ordered_json config;
    if (c.gpt2()) {
        config = {{"architectures", {"GPT2LMHeadModel"}},
                  {"model_type", "gpt2"},
                  {"n_embd", c.dim},
                  {"n_layer", c.n_layers},
                  {"n_head", c.n_heads},
                  {"n_positions", c.n_positions},
                  {"n_inner", c.hidden_dim},
                  {"vocab_size", c.vocab_size},
                  {"activation_function", "gelu_new"},
                  {"layer_norm_epsilon", as_written(c.norm_eps)},
                  {"tie_word_embeddings", c.shared_classifier},
                  {"bos_token_id", BpeTokenizer::kBos},
                  {"eos_token_id", BpeTokenizer::kEos},
                  {"torch_dtype", dtype}};
    } else {
        config = {{"architectures", {c.qkv_bias ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
                  {"model_type", c.qkv_bias ? "qwen2" : "llama"},
                  {"hidden_size", c.dim},
                  {"intermediate_size", c.hidden_dim},
                  {"num_hidden_layers", c.n_layers},
                  {"num_attention_heads", c.n_heads},
                  {"num_key_value_heads", c.n_kv_heads},
                  {"vocab_size", c.vocab_size},
                  {"max_position_embeddings", c.seq_len},
                  {"hidden_act", "silu"},
                  {"rms_norm_eps", as_written(c.norm_eps)},
                  {"rope_theta", as_written(c.rope_theta)},
                  {"rope_scaling", nullptr},
                  {"tie_word_embeddings", c.shared_classifier},
                  {"bos_token_id", BpeTokenizer::kBos},
                  {"eos_token_id", BpeTokenizer::kEos},
                  {"torch_dtype", dtype}};
        if (linear)
            config["rope_scaling"] = {{"rope_type", "linear"}, {"factor", as_written(rf[0])}};
    }
    const auto tb = tokenizer_file_bytes(tok);
    write_output_file((dir / "tokenizer.bin").string(),
                      std::string_view(reinterpret_cast<const char*>(tb.data()), tb.size()));
    // config.json last: a folder cut short by an error is not yet a model.
    write_output_file((dir / "config.json").string(), config.dump(2) + "\n");
}

}  // namespace kvs
