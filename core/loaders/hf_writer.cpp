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
#include "core/loaders/tensor_slots.h"
#include "core/util/error.h"
#include "core/util/output_file.h"

namespace kvs {
namespace fs = std::filesystem;
namespace {

// The tensors of the model's architecture table, every one as `type`, in the file's order (q and
// k rows rotate-half, Conv1D matrices [in, out], fused parts joined).
std::vector<SafeTensorOut> table_tensors(const ModelConfig& c, const LlamaWeights& w,
                                         GgmlType type) {
    const ArchTable& t = arch_of(c);
    const std::size_t value_bytes = ggml_row_bytes(type, 1);
    std::vector<SafeTensorOut> out;
    std::vector<float> ours, file_order;
    for (const TensorSlot& s : tensor_slots(t, c, FileFormat::hf, &w)) {
        const std::size_t n = s.elements(), part = n / s.to.size();
        ours.clear();
        for (const float* p : s.to) ours.insert(ours.end(), p, p + part);
        file_order.resize(n);
        reorder_values(s, ours.data(), file_order.data(), c.head_dim(), true);
        SafeTensorOut f{(s.row->classifier() ? "" : t.hf_prefix) + s.name, type, s.dims,
                        std::string(n * value_bytes, '\0')};
        encode_values(type, file_order.data(), n, reinterpret_cast<unsigned char*>(f.bytes.data()));
        out.push_back(std::move(f));
    }
    return out;
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

    const ArchTable& table = arch_of(c);
    std::vector<SafeTensorOut> all = table_tensors(c, w, type);

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
    const auto shard_file = [&](std::size_t i) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
        return shards.size() == 1 ? std::string("model.safetensors") : std::string(name);
    };
    // Every file the folder gets is checked before the first is written: one the user keeps
    // there must not stop the export half-way.
    for (std::size_t i = 0; i < shards.size(); ++i)
        check_output_path((dir / shard_file(i)).string(), safetensors_output());
    check_output_path((dir / "tokenizer.bin").string(), tokenizer_bin_output());
    nlohmann::ordered_json map = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const std::string file = shard_file(i);
        for (const auto& t : shards[i]) map[t.name] = file;
        write_output_file((dir / file).string(), safetensors_bytes(shards[i]),
                          safetensors_output());
    }
    if (shards.size() > 1) {
        const std::string index = nlohmann::ordered_json{
            {"metadata", {{"written_by", "kvscope"}}},
            {"weight_map", map}}.dump(2);
        write_output_file((dir / "model.safetensors.index.json").string(), index,
                          output_starting("shard index", index.substr(0, index.find('}'))));
    }

    const char* dtype = type == GgmlType::F32   ? "float32"
                        : type == GgmlType::F16 ? "float16"
                                                : "bfloat16";
    // config.json from the table: the class, the integer shapes, the activation, the floats, what
    // only the architecture states, then the classifier and the special tokens.
    nlohmann::ordered_json config = {{"architectures", {table.hf_class}},
                                     {"model_type", table.hf_model_type}};
    for (const IntKey& k : table.ints)
        if (k.hf) config[k.hf] = c.*k.field;
    config[table.hf_act_key] = table.hf_act_value;
    for (const FloatKey& k : table.floats) config[k.hf] = config_number(c.*k.field);
    if (table.hf_write) table.hf_write(c, config);
    config["tie_word_embeddings"] = c.shared_classifier;
    config["bos_token_id"] = BpeTokenizer::kBos;
    config["eos_token_id"] = BpeTokenizer::kEos;
    config["torch_dtype"] = dtype;
    const auto tb = tokenizer_file_bytes(tok);
    write_output_file((dir / "tokenizer.bin").string(),
                      std::string_view(reinterpret_cast<const char*>(tb.data()), tb.size()),
                      tokenizer_bin_output());
    // config.json last: a folder cut short by an error is not yet a model.
    write_output_file((dir / "config.json").string(), config.dump(2) + "\n",
                      unmarked_output("config.json"));
}

double config_number(float v) {
    char buf[32];
    for (int digits = 1; digits < 9; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, double(v));
        if (std::strtof(buf, nullptr) == v) return std::strtod(buf, nullptr);
    }
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return std::strtod(buf, nullptr);
}

}  // namespace kvs
