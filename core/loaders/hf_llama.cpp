#include "core/loaders/hf_llama.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/files/json_input.h"
#include "core/files/mapped_file.h"
#include "core/loaders/load_pipeline.h"
#include "core/model/rope_frequencies.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/tokenizers/spm_model_file.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/utf8.h"

namespace kvs {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxConfigBytes = std::size_t(1) << 20;
constexpr std::size_t kMaxShards = 1024;

// Something is at `p`, whatever it is: a file, a folder, a pipe, a link that dangles or loops.
// A folder's files are looked for by this, so that one present but unreadable is refused by the
// reader with its reason ("is a folder", "Too many levels of symbolic links"), never taken for
// missing.
bool is_present(const fs::path& p) {
    std::error_code ec;
    const auto t = fs::symlink_status(p, ec).type();
    return t != fs::file_type::not_found && t != fs::file_type::none;
}

}  // namespace

std::string hf_model_folder(const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    if (fs::is_directory(p, ec)) return is_present(p / "config.json") ? p.string() : std::string();
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (p.filename() == "config.json" && is_present(p)) return dir.string();
    if (p.extension() == ".safetensors" && is_present(dir / "config.json")) return dir.string();
    return {};
}

HfLlama parse_hf_llama(std::string_view config_json, const std::vector<SafetensorsFile>& shards,
                       const std::string& name, const OpenLimits& limits, GgmlType weights,
                       std::shared_ptr<const void> keep, const ShardDoneWith& done_with) {
    const Refuse unknown{name + ": Hugging Face Llama model"};
    const auto j = parse_json_input(config_json, name + ": config.json");
    if (!j.is_object()) unknown("config.json is not a JSON object");
    std::string hf_class = "?", model_type;
    if (const auto a = j.find("architectures");
        a != j.end() && a->is_array() && !a->empty() && (*a)[0].is_string())
        hf_class = (*a)[0].get<std::string>();
    if (const auto m = j.find("model_type"); m != j.end() && m->is_string())
        model_type = m->get<std::string>();
    const ArchTable* t = arch_of_hf(hf_class, model_type);
    if (!t)
        unknown("architecture '" + hf_class.substr(0, 60) + "' is not supported (kvscope runs " +
                hf_arch_names() + ")");
    const Refuse fail{name + ": Hugging Face " + t->hf_label + " model"};
    if (t->float32_only && weights != GgmlType::F32)
        fail("--weights " + weight_type_option_name(weights) + ": the " + t->gguf_name +
             " architecture runs with float32 weights only");
    std::string context_note;
    const ModelConfig c = hf_config(*t, j, limits, context_note, fail, name);

    // Every tensor of every shard, by name: a name twice is refused.
    std::map<std::string, const SafeTensor*> all;
    for (const auto& s : shards)
        for (const auto& st : s.tensors())
            if (!all.emplace(st.name, &st).second)
                fail("tensor '" + st.name + "' is in two shards");
    std::vector<FileTensor> files;
    for (const auto& [n, st] : all)
        files.push_back({n, st->type, st->data, st->shape, st->elements,
                         ggml_row_bytes(st->type, st->elements)});
    LoadedTensors lt = load_tensors(
        *t, c, {FileFormat::hf, &files, weights, std::move(keep), done_with, limits, name}, fail);

    HfLlama h;
    h.ck = std::move(lt.ck);
    for (auto [key, out] : {std::pair{"bos_token_id", &h.bos}, std::pair{"eos_token_id", &h.eos}})
        if (const auto it = j.find(key); it != j.end() && it->is_number_unsigned() &&
                                         it->get<std::uint64_t>() < std::uint64_t(c.vocab_size))
            *out = int(it->get<std::uint64_t>());
    h.format = std::string("Hugging Face ") + t->hf_class + ", " + std::to_string(shards.size()) +
               (shards.size() == 1 ? " safetensors file" : " safetensors shards") +
               ", tensors:" + type_counts_text(lt.type_counts);
    h.format += h.ck.compact.held() ? ", matrices kept " + std::string(ggml_type_name(weights)) +
                                          ", embeddings and norms dequantised to float32"
                                    : std::string(t->hf_note);
    h.format += context_note;
    return h;
}

std::unique_ptr<Model> load_hf_model(const std::string& path, const std::string& tokenizer,
                                     const OpenLimits& limits, GgmlType weights) {
    const std::string folder = hf_model_folder(path);
    if (folder.empty()) throw Error(path + ": not a Hugging Face model folder (no config.json)");
    const fs::path dir(folder);
    const auto config = read_file_bytes((dir / "config.json").string(), kMaxConfigBytes);

    // The shards: the index's weight_map files (each once), or model.safetensors.
    std::vector<std::string> files;
    // Present but not a regular file (a folder, a pipe): the readers below refuse it by name.
    if (is_present(dir / "model.safetensors.index.json")) {
        const std::string index = (dir / "model.safetensors.index.json").string();
        const auto bytes = read_file_bytes(index, kMaxConfigBytes * 64);
        const auto j = parse_json_input(
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), index);
        const nlohmann::json* map = json_member(j, "weight_map");
        if (!map || !map->is_object())
            throw Error(index + ": not a safetensors index (no weight_map object)");
        std::set<std::string> seen;
        for (const auto& [tensor, file] : map->items()) {
            const FileField where{index, "weight_map[\"" + tensor.substr(0, 40) + "\"]"};
            // A shard is a file in this folder: a name, nothing that leads out of it or that the
            // C library would cut short (a NUL byte).
            check_file_name(json_string(file, where), where, folder);
            if (seen.insert(file.get<std::string>()).second)
                files.push_back(file.get<std::string>());
        }
        if (files.empty() || files.size() > kMaxShards)
            throw Error(index + ": " + std::to_string(files.size()) +
                        " shards (1 to 1024 are read)");
    } else if (is_present(dir / "model.safetensors")) {
        files.push_back("model.safetensors");
    } else {
        throw Error(folder + ": no model.safetensors or model.safetensors.index.json");
    }
    std::vector<std::shared_ptr<const MappedFile>> maps;
    std::vector<SafetensorsFile> shards;
    for (const auto& f : files) {
        const std::string p = (dir / f).string();
        maps.push_back(MappedFile::open(p, kMaxModelFileBytes));
        shards.push_back(SafetensorsFile::parse(maps.back()->data(), maps.back()->size(), p));
    }
    auto keep = std::make_shared<std::vector<std::shared_ptr<const MappedFile>>>(maps);
    HfLlama h = parse_hf_llama(
        std::string_view(reinterpret_cast<const char*>(config.data()), config.size()), shards,
        folder, limits, weights, keep, [&maps](const unsigned char* p, std::size_t n) {
            for (const auto& m : maps)
                if (p >= m->data() && p < m->data() + m->size()) m->release(p, n);
        });
    keep.reset();
    maps.clear();  // float32 copies now, or compact matrices that keep the mappings themselves

    const int V = h.ck.config.vocab_size;
    std::string tok = tokenizer;
    if (tok.empty() && is_present(dir / "tokenizer.bin")) tok = (dir / "tokenizer.bin").string();
    const std::string name =
        escape_for_one_line(fs::path(folder).lexically_normal().filename().string());
    const auto ext = fs::path(tok).extension();
    if (!tok.empty() && ext != ".json" && ext != ".model") {
        BpeTokenizer t = BpeTokenizer::load(tok, V);
        return std::make_unique<TransformerModel>(
            std::move(h.ck), std::make_unique<BpeTokenizer>(std::move(t)),
            std::vector<int>{BpeTokenizer::kBos}, name,
            h.format + ", tokenizer " + escape_for_one_line(fs::path(tok).filename().string()));
    }
    // SentencePiece's own file (Llama 2's, TinyLlama's) before tokenizer.json: their
    // tokenizer.json is the SentencePiece-style one, which the byte-level reader refuses.
    if (tok.empty() && is_present(dir / "tokenizer.model") && reads_sentencepiece_models())
        tok = (dir / "tokenizer.model").string();
    if (!tok.empty() && fs::path(tok).extension() == ".model") {
        auto t = std::make_unique<SpmTokenizer>(spm_tokenizer_from_model_file(tok, V));
        std::vector<int> stop;
        for (int id : {h.eos >= 0 ? h.eos : t->eos(), h.bos >= 0 ? h.bos : t->bos_id()})
            if (id >= 0 && (stop.empty() || stop[0] != id)) stop.push_back(id);
        return std::make_unique<TransformerModel>(std::move(h.ck), std::move(t), std::move(stop),
                                                  name,
                                                  h.format + ", tokenizer.model (SentencePiece)");
    }
    if (tok.empty() && is_present(dir / "tokenizer.json")) tok = (dir / "tokenizer.json").string();
    if (tok.empty())
        throw Error(folder +
                    ": no tokenizer in the folder (looked for tokenizer.bin, tokenizer.model, "
                    "tokenizer.json); pass --tokenizer FILE");
    auto t = std::make_unique<ByteBpeTokenizer>(ByteBpeTokenizer::from_hf_json(tok));
    if (t->vocab_size() != V)
        throw Error(tok + ": " + std::to_string(t->vocab_size()) +
                    " tokens, the model's vocab_size is " + std::to_string(V));
    std::vector<int> stop;
    for (int id : {h.eos >= 0 ? h.eos : t->eos(), h.bos >= 0 ? h.bos : t->bos_id()})
        if (id >= 0 && (stop.empty() || stop[0] != id)) stop.push_back(id);
    return std::make_unique<TransformerModel>(std::move(h.ck), std::move(t), std::move(stop), name,
                                              h.format + ", tokenizer.json (byte-level BPE)");
}

}  // namespace kvs
