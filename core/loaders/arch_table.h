#pragma once
// One description per architecture, as llama.cpp's architecture tables are: its hyper-parameters'
// keys (GGUF metadata and Hugging Face config.json), every tensor with its name in both formats,
// its shape and the weights it fills, and the forward pass's differences as flags. The one loader
// pipeline (core/loaders/load_pipeline.h) reads GGUF and HF files through these tables, and the
// writers (gguf_writer.h, hf_writer.h) write through them. Adding an architecture is one table
// (arch_<name>.cpp) and its forward differences.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/llama_weights.h"

namespace kvs {

class GgufFile;

// Throws kvs::Error "LABEL: WHY" (LABEL: "FILE: GGUF llama model"): one line naming the file.
struct Refuse {
    std::string label;
    [[noreturn]] void operator()(const std::string& why) const;
};

// A tensor's side, named by the hyper-parameter it is.
enum class Side : std::uint8_t { one, dim, dim3, kv_dim, hidden, vocab, positions };
std::uint64_t side_length(Side s, const ModelConfig& c);

using WeightView = const float* LlamaWeights::*;

// A tensor kind's flags. kRopeRows: q and k, weights and biases, whose rows are in the
// rotate-half order in HF files (and in GGUF files when ArchTable::gguf_rope_rows). kConv1d: HF
// stores the matrix [in, out] (GPT-2's Conv1D). kClassifier: absent when the classifier is the
// embedding table.
enum TensorFlags : unsigned { kRopeRows = 1, kConv1d = 2, kClassifier = 4 };

// One tensor kind. Our shape is [out, in] (a vector: in is Side::one); GGUF states it [in, out],
// HF [out, in] ([in, out] for a Conv1D matrix).
struct TensorRow {
    const char* gguf;  // per layer: after "blk.N."
    const char* hf;    // per layer: after ArchTable::hf_layer and "N."
    bool per_layer;
    Side out, in;
    // The weights its values fill, in equal consecutive parts (a fused q/k/v: q's, k's, v's).
    std::vector<WeightView> fills;
    unsigned flags = 0;  // kRopeRows | kConv1d | kClassifier
    bool rope_rows() const { return flags & kRopeRows; }
    bool conv1d() const { return flags & kConv1d; }
    bool classifier() const { return flags & kClassifier; }
};

// An integer hyper-parameter: its ModelConfig field and keys, read in the table's order.
enum class Fallback : std::uint8_t { none, n_heads, four_dim };
struct IntKey {
    int ModelConfig::*field;
    const char* gguf;  // after "<arch>."; nullptr: not in the metadata (vocab: token_embd's rows)
    const char* hf;    // nullptr: not in config.json (the fallback's value)
    Fallback gguf_fallback = Fallback::none, hf_fallback = Fallback::none;
};
// A float hyper-parameter, its defaults when absent.
struct FloatKey {
    float ModelConfig::*field;
    const char* gguf;
    const char* hf;
    float gguf_default, hf_default;
};

enum class NormKind : std::uint8_t { rms, layer };         // RMSNorm, or LayerNorm with a bias
enum class PositionKind : std::uint8_t { rope, learned };  // RoPE, or a learned position table
enum class FfnKind : std::uint8_t { swiglu, gelu };        // w2(silu(w1 x) * w3 x), or GELU MLP

struct ArchTable {
    Architecture arch;
    const char* gguf_name;      // general.architecture
    const char* hf_class;       // config.json's architectures[0]
    const char* hf_model_type;  // config.json's model_type
    // The refusals' words: "GGUF <gguf_label> model", "Hugging Face <hf_label> model", and what an
    // unknown HF tensor "is not one of" (hf_owner's).
    const char* gguf_label;
    const char* hf_label;
    const char* hf_owner;
    // The forward pass's differences. The forward pass selects by ModelConfig's arch and
    // qkv_bias, which the loaders set from here; tests/loaders/test_arch_table.cpp keeps the two
    // agreeing.
    NormKind norm;
    PositionKind positions;
    FfnKind ffn;
    bool qkv_bias;
    bool tied_default;      // tie_word_embeddings when config.json does not say
    bool gguf_rope_rows;    // GGUF's q/k rows in the rotate-half order (a NEOX RoPE)
    bool float32_only;      // runs float32 weights only (no compact matrices)
    bool hf_type_names_it;  // model_type alone (no architectures) names it
    std::span<const IntKey> ints;
    std::span<const FloatKey> floats;
    // Tensors, in the order the files hold them (a run of per-layer kinds: layer by layer).
    std::span<const TensorRow> tensors;
    const char* hf_layer;   // "model.layers.": a layer's HF names are hf_layer + "N." + row.hf
    const char* hf_prefix;  // a prefix some saves put before every name but the classifier's
    std::span<const char* const> hf_ignored_per_layer;  // buffers a save may hold: "attn.bias"
    const char* hf_ignored_suffix;                      // ".inv_freq", or nullptr
    const char* gguf_side_tensor;  // a tensor its gguf_shapes reads itself, or nullptr
    // The load notes of the format line (float32 copies).
    const char* gguf_note;
    const char* hf_note;
    // config.json's activation key and value as the HF writer states them.
    const char* hf_act_key;
    const char* hf_act_value;
    // What only this architecture reads or refuses, each at its step of the pipeline:
    // config.json's switches kvscope's forward pass does not have (before the shapes);
    void (*hf_refusals)(const nlohmann::json& j, const Refuse& fail);
    // after the integer shapes (and before the context is cut);
    void (*hf_shapes)(const nlohmann::json& j, ModelConfig& c, const Refuse& fail);
    void (*gguf_shapes)(const GgufFile& f, const std::string& key, ModelConfig& c,
                        const Refuse& fail);
    // after ModelConfig::validate.
    void (*hf_checked)(const nlohmann::json& j, ModelConfig& c, const Refuse& fail,
                       const std::string& name);
    void (*gguf_checked)(const GgufFile& f, const std::string& key, const ModelConfig& c,
                         const Refuse& fail);
    // config.json's keys of this architecture the HF writer adds after the floats (or nullptr).
    void (*hf_write)(const ModelConfig& c, nlohmann::ordered_json& config);
};

const ArchTable& llama_arch();
const ArchTable& qwen2_arch();
const ArchTable& gpt2_arch();
std::span<const ArchTable* const> all_archs();

// The table of general.architecture `name`, of config.json's class (or, for a table whose
// model_type names it, its model_type when `hf_class` is "?"), of a model's shapes; nullptr when
// none.
const ArchTable* arch_of_gguf(std::string_view name);
const ArchTable* arch_of_hf(std::string_view hf_class, std::string_view model_type);
const ArchTable& arch_of(const ModelConfig& c);

// "'llama', 'qwen2' and 'gpt2'", "LlamaForCausalLM, Qwen2ForCausalLM and GPT2LMHeadModel".
std::string gguf_arch_names();
std::string hf_arch_names();

}  // namespace kvs
