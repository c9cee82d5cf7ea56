#include "core/loaders/model_loader.h"

#include <exception>
#include <filesystem>
#include <new>
#include <system_error>

#include "core/loaders/checkpoint.h"
#include "core/loaders/gguf_llama.h"
#include "core/loaders/hf_llama.h"
#include "core/loaders/model_stores.h"
#include "core/loaders/named_format.h"
#include "core/model/toy_model.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/install_paths.h"
#include "core/util/utf8.h"

#ifndef KVSCOPE_SOURCE_DIR
#define KVSCOPE_SOURCE_DIR "."
#endif

namespace kvs {
namespace fs = std::filesystem;

namespace {

std::string first_existing(const std::vector<fs::path>& candidates) {
    for (const auto& p : candidates)
        if (is_file(p)) return p.lexically_normal().string();
    return {};
}

}  // namespace

std::optional<std::string> find_tokenizer_beside(const std::string& checkpoint) {
    const fs::path ck(checkpoint);
    const fs::path dir = ck.has_parent_path() ? ck.parent_path() : fs::path(".");
    for (const auto& name : {ck.stem().string() + ".tok.bin", std::string("tokenizer.bin")})
        if (is_file(dir / name)) return (dir / name).string();
    std::optional<std::string> only;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const auto fn = e.path().filename().string();
        if (fn.rfind("tok", 0) == 0 && e.path().extension() == ".bin" && is_file(e.path())) {
            if (only) return std::nullopt;  // ambiguous
            only = e.path().string();
        }
    }
    return only;
}

std::string default_model_path() {
    std::vector<fs::path> c;
    for (const auto& assets : data_folder_candidates("KVSCOPE_ASSETS", "assets"))
        c.push_back(assets / "models/kvscope-tiny.bin");
    return first_existing(c);
}

std::string stories260k_path() {
    return first_existing({fs::path("../shared/models/stories260K.bin"),
                           fs::path(KVSCOPE_SOURCE_DIR) / "../shared/models/stories260K.bin"});
}

namespace {
// The pieces of a small file that reads whole as a llama2.c tokenizer, else 0.
int llama2c_tokenizer_pieces(const std::string& path) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec || size > (std::uintmax_t(64) << 20)) return 0;
    try {
        return BpeTokenizer::load(path, -1).vocab_size();
    } catch (const Error&) {
        return 0;
    }
}
}  // namespace

std::string model_path_of(const std::string& spec) {
    if (spec == "toy") return {};
    if (spec == "default") return default_model_path();
    if (spec == "stories260K") return stories260k_path();
    std::error_code ec;
    if (!fs::exists(spec, ec) && names_store_model(spec)) return resolve_store_model(spec);
    return spec;
}

std::vector<std::string> available_model_names() {
    std::vector<std::string> names{"toy"};
    if (!default_model_path().empty()) names.push_back("default");
    if (!stories260k_path().empty()) names.push_back("stories260K");
    return names;
}

std::unique_ptr<Model> open_model(const std::string& spec, const std::string& tokenizer,
                                  WeightsWanted weights) {
    return open_model(spec, tokenizer, OpenLimits{0, {host_memory_budget()}}, weights);
}

namespace {

std::unique_ptr<Model> open_checked(const std::string& spec, const std::string& tokenizer,
                                    const OpenLimits& limits, WeightsWanted wanted);

}  // namespace

std::unique_ptr<Model> open_model(const std::string& spec, const std::string& tokenizer,
                                  const OpenLimits& limits, WeightsWanted wanted) {
    // The boundary between the files a user gives and the rest: every reader checks what it reads
    // (core/util/checked.h) and throws kvs::Error; should the standard library still throw on a
    // file's behalf (an allocation refused, a length beyond what a container holds), that becomes
    // one line naming the file too, not an "internal error".
    const std::string named = tokenizer.empty() ? spec : spec + " (tokenizer " + tokenizer + ")";
    try {
        return open_checked(spec, tokenizer, limits, wanted);
    } catch (const Error&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw Error(named + ": out of memory while opening it");
    } catch (const std::exception& e) {
        throw Error(named + ": cannot be opened: " + e.what());
    }
}

namespace {

std::unique_ptr<Model> open_checked(const std::string& spec, const std::string& tokenizer,
                                    const OpenLimits& limits, WeightsWanted wanted) {
    check_path_text(spec);
    check_path_text(tokenizer);
    // Only a GGUF file keeps its own types; every other format is float32 unless asked.
    const GgmlType weights = wanted.value_or(GgmlType::F32);
    if (spec == "toy") {
        if (weights != GgmlType::F32)
            throw Error("--weights " + weight_type_option_name(weights) +
                        ": the toy model has no weight matrices to keep compact");
        return std::make_unique<ToyModel>();
    }
    // The name a view shows: the file's, escaped (core/util/utf8.h) as any text from a file is.
    std::string path = spec, name = escape_for_one_line(fs::path(spec).stem().string());
    if (spec == "default") {
        path = default_model_path();
        name = "kvscope-tiny";
        if (path.empty())
            throw Error(
                "the default model assets/models/kvscope-tiny.bin was not found "
                "(set KVSCOPE_ASSETS to the repository's assets/ folder)");
    } else if (spec == "stories260K") {
        path = stories260k_path();
        if (path.empty()) throw Error("stories260K: ../shared/models/stories260K.bin not found");
    } else if (std::error_code ec; !fs::exists(spec, ec) && names_store_model(spec)) {
        path = resolve_store_model(spec);  // the Hugging Face cache, Ollama's store
        name = spec;
    }
    // A Hugging Face folder (config.json + safetensors): its own layout and tokenizer files.
    if (!hf_model_folder(path).empty()) {
        if (!tokenizer.empty()) check_tokenizer_name(tokenizer, /*hf=*/true);
        return load_hf_model(path, tokenizer, limits, weights);
    }
    std::error_code ec;
    if (fs::is_directory(path, ec))
        throw Error(path +
                    ": is a folder; give the path of a file in it, or of a Hugging Face model "
                    "folder (one with config.json)");
    if (fs::path(path).extension() == ".safetensors")
        throw Error(path +
                    ": no config.json beside it (a .safetensors file is read as part of a Hugging "
                    "Face model folder, with the folder's config.json)");
    // By content, not by name: a GGUF file carries its own tokenizer. A name that says another
    // format than the bytes is refused naming both (core/loaders/named_format.h).
    if (model_file_is_gguf(path)) {
        if (!tokenizer.empty())
            throw Error(path + ": a GGUF file carries its own tokenizer; drop --tokenizer " +
                        tokenizer);
        return load_gguf_model(path, name, limits, wanted);
    }
    // Mapped and checked, not read: the KV cache is for the chosen context, and the weights as
    // they will be kept must fit before any matrix is converted.
    std::string context_note;
    Checkpoint ck;
    try {
        ck = load_checkpoint(path, weights, [&](Checkpoint& mapped) {
            ModelConfig& c = mapped.config;
            c.seq_len = session_context(c.seq_len, limits.context, context_note);
            check_fits(path,
                       kept_weight_bytes(c, weights,
                                         std::uint64_t(mapped.weights.all.size()) * sizeof(float)),
                       c, limits);
        });
    } catch (const Error& e) {
        refuse_misnamed(path, e.what());  // x.gguf that is neither GGUF nor a checkpoint
        // A tokenizer given as the model reads as a header of nonsense ("hidden_dim = 0"):
        // say what the file is instead.
        if (const int pieces = llama2c_tokenizer_pieces(path); pieces > 0)
            throw Error(path + ": a llama2.c tokenizer (" + std::to_string(pieces) +
                        " pieces), not a model: give the model with --model and this file with "
                        "--tokenizer");
        throw;
    }
    std::string tok_path = tokenizer;
    if (!tok_path.empty()) check_tokenizer_name(tok_path, /*hf=*/false);
    if (tok_path.empty()) {
        auto found = find_tokenizer_beside(path);
        if (!found)
            throw Error(path + ": no tokenizer beside it (looked for " +
                        fs::path(path).stem().string() +
                        ".tok.bin, tokenizer.bin, tok*.bin); pass --tokenizer FILE");
        tok_path = *found;
    }
    BpeTokenizer tok = BpeTokenizer::load(tok_path, ck.config.vocab_size);
    if (context_note.empty())
        return std::make_unique<TransformerModel>(std::move(ck), std::move(tok), name);
    return std::make_unique<TransformerModel>(
        std::move(ck), std::make_unique<BpeTokenizer>(std::move(tok)),
        std::vector<int>{BpeTokenizer::kBos}, name,
        "llama2.c checkpoint, float32, mapped read-only" + context_note);
}

}  // namespace

}  // namespace kvs
