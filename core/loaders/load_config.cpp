// The pipeline's first half: a file's hyper-parameters into a validated ModelConfig, through the
// architecture's table (core/loaders/load_pipeline.h).
#include <nlohmann/json.hpp>

#include "core/files/json_input.h"
#include "core/loaders/load_pipeline.h"
#include "core/util/checked.h"

namespace kvs {
namespace {

int fallback_of(Fallback f, const ModelConfig& c) {
    switch (f) {
        case Fallback::none:
            return -1;
        case Fallback::n_heads:
            return c.n_heads;
        case Fallback::four_dim:
            return c.dim <= (1 << 20) ? 4 * c.dim : 0;  // validate names dim
    }
    return -1;
}

// Shared by both formats once the shapes are read: learned positions bound the context; the
// context the user chose, when shorter, is the one the KV cache is allocated for.
void finish_shapes(const ArchTable& t, ModelConfig& c, const std::string& positions_key,
                   const OpenLimits& limits, std::string& note, const Refuse& fail) {
    if (t.positions == PositionKind::learned) {
        if (c.n_positions == 0)
            fail(positions_key + " is 0 (the position table needs a row per position)");
        c.seq_len = c.n_positions;
    }
    if (c.seq_len > 0) c.seq_len = session_context(c.seq_len, limits.context, note);
    cut_context_to_kv_bound(c, note);
}

ModelConfig table_config(const ArchTable& t) {
    ModelConfig c;
    c.arch = t.arch;
    c.qkv_bias = t.qkv_bias;
    return c;
}

}  // namespace

ModelConfig gguf_config(const ArchTable& t, const GgufFile& f, const OpenLimits& limits,
                        std::string& note, const Refuse& fail) {
    const std::string key = std::string(t.gguf_name) + ".";  // the metadata's prefix
    const std::string emb_name = t.tensors[0].gguf;          // the embedding table
    const GgufTensorInfo* emb = f.tensor(emb_name);
    if (!emb || emb->dims.size() != 2) fail("no 2-D tensor '" + emb_name + "'");
    ModelConfig c = table_config(t);
    std::string positions_key;
    for (const IntKey& k : t.ints) {
        if (!k.gguf) {  // the vocabulary: the embedding table's rows
            c.*k.field = static_cast<int>(checked_uint(emb->dims[1], ModelConfig::kMaxVocab,
                                                       {fail.label, emb_name + "'s rows"},
                                                       "a vocabulary size"));
            continue;
        }
        const std::string name = key + k.gguf;
        if (k.field == &ModelConfig::n_positions) positions_key = name;
        const auto v = f.get_uint(name);
        const int fallback = fallback_of(k.gguf_fallback, c);
        if (!v && fallback < 0) fail("no metadata '" + name + "'");
        c.*k.field =
            v ? static_cast<int>(checked_uint(*v, 1u << 30, {fail.label, name})) : fallback;
    }
    for (const TensorRow& r : t.tensors)
        if (r.classifier()) c.shared_classifier = f.tensor(r.gguf) == nullptr;
    for (const FloatKey& k : t.floats) {
        const auto v = f.get_float(key + k.gguf);
        c.*k.field = v ? to_float(*v) : k.gguf_default;
    }
    if (t.gguf_shapes) t.gguf_shapes(f, key, c, fail);
    finish_shapes(t, c, positions_key, limits, note, fail);
    c.validate(f.name(), "GGUF file");
    if (t.gguf_checked) t.gguf_checked(f, key, c, fail);
    return c;
}

ModelConfig hf_config(const ArchTable& t, const nlohmann::json& j, const OpenLimits& limits,
                      std::string& note, const Refuse& fail, const std::string& name) {
    if (t.hf_refusals) t.hf_refusals(j, fail);
    ModelConfig c = table_config(t);
    for (const FloatKey& k : t.floats) {
        const nlohmann::json* v = json_member(j, k.hf);
        if (v && !v->is_number())
            fail(std::string("config.json: ") + k.hf + " = " + json_excerpt(*v, 40) +
                 " is not a number");
        c.*k.field = v ? to_float(v->get<double>()) : k.hf_default;
    }
    std::string positions_key;
    for (const IntKey& k : t.ints) {
        const nlohmann::json* v = k.hf ? json_member(j, k.hf) : nullptr;
        if (k.field == &ModelConfig::n_positions) positions_key = k.hf;
        const int fallback = fallback_of(k.hf_fallback, c);
        if (!v && fallback < 0) fail(std::string("config.json has no ") + k.hf);
        c.*k.field =
            v ? int(json_int(*v, 0, 1 << 30, {fail.label, std::string("config.json: ") + k.hf}))
              : fallback;
    }
    if (t.hf_shapes) t.hf_shapes(j, c, fail);
    c.shared_classifier = t.tied_default;
    if (const nlohmann::json* v = json_member(j, "tie_word_embeddings")) {
        if (!v->is_boolean())
            fail("config.json: tie_word_embeddings = " + json_excerpt(*v, 40) +
                 " is not true or false");
        c.shared_classifier = v->get<bool>();
    }
    finish_shapes(t, c, positions_key, limits, note, fail);
    c.validate(name, "Hugging Face model");
    if (t.hf_checked) t.hf_checked(j, c, fail, name);
    return c;
}

}  // namespace kvs
