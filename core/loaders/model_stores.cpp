#include "core/loaders/model_stores.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "core/files/json_input.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace fs = std::filesystem;

namespace {

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

bool is_folder(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

bool is_regular(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);  // through symlinks: the hub cache's files are links
}

// A name as Hugging Face and Ollama spell repositories: letters, digits, '-', '_', '.', not "."
// or "..", so no part of a spec steps out of the store.
bool plain_name(std::string_view s) {
    if (s.empty() || s == "." || s == "..") return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::size_t at = 0;
    while (true) {
        const auto end = s.find(sep, at);
        parts.push_back(s.substr(at, end == std::string::npos ? end : end - at));
        if (end == std::string::npos) return parts;
        at = end + 1;
    }
}

// The first line of a small text file (refs/main holds a commit hash), without spaces.
std::string first_word(const fs::path& p) {
    const auto bytes = read_file_bytes(p.string(), 4096);
    std::string s(bytes.begin(), bytes.end());
    const auto a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return {};
    return s.substr(a, s.find_first_of(" \t\r\n", a) - a);
}

// ----- the Hugging Face hub cache -----

fs::path hf_cache(const StoreEnvironment& env) {
    if (!env.hf_hub_cache.empty()) return env.hf_hub_cache;
    if (!env.hf_home.empty()) return fs::path(env.hf_home) / "hub";
    const fs::path cache =
        !env.xdg_cache_home.empty() ? fs::path(env.xdg_cache_home) : fs::path(env.home) / ".cache";
    return cache / "huggingface" / "hub";
}

std::string resolve_hf(const std::string& spec, const StoreEnvironment& env) {
    const auto at = spec.find('@');
    const std::string repo = spec.substr(0, at);
    const std::string rev = at == std::string::npos ? "main" : spec.substr(at + 1);
    const auto slash = repo.find('/');
    const fs::path folder =
        hf_cache(env) / ("models--" + repo.substr(0, slash) + "--" + repo.substr(slash + 1));
    const std::string get = "; get it with `hf download " + repo +
                            (at == std::string::npos ? "" : " --revision " + rev) +
                            "` (huggingface_hub; older: huggingface-cli download)";
    if (!is_folder(folder))
        throw Error(spec + ": no such file here, and not in the Hugging Face cache (looked for " +
                    folder.string() + "; HF_HUB_CACHE or HF_HOME choose another cache)" + get);
    // A branch or tag is a file in refs/ naming its commit; a commit names its snapshot itself.
    std::string commit = rev;
    if (plain_name(rev) && is_regular(folder / "refs" / rev))
        commit = first_word(folder / "refs" / rev);
    const fs::path snapshot = folder / "snapshots" / commit;
    if (!plain_name(commit) || !is_folder(snapshot))
        throw Error(spec + ": revision " + rev + " is not in the Hugging Face cache (looked for " +
                    (folder / "refs" / rev).string() + " and " +
                    (folder / "snapshots" / rev).string() + ")" + get);
    if (is_regular(snapshot / "config.json")) return snapshot.string();
    // A GGUF repository (llama.cpp's files): its one .gguf, or the user picks.
    std::vector<std::string> ggufs;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(snapshot, ec))
        if (e.path().extension() == ".gguf" && is_regular(e.path()))
            ggufs.push_back(e.path().string());
    std::sort(ggufs.begin(), ggufs.end());
    if (ggufs.size() == 1) return ggufs[0];
    if (ggufs.empty())
        throw Error(spec + ": the cached snapshot " + snapshot.string() +
                    " holds no config.json and no .gguf file (a download not finished?)" + get);
    std::string names;
    for (const auto& g : ggufs)
        names += (names.empty() ? "" : ", ") + fs::path(g).filename().string();
    throw Error(spec + ": the cached snapshot holds " + std::to_string(ggufs.size()) +
                " GGUF files (" + names + "): give one as --model " + ggufs[0]);
}

// ----- Ollama's store -----

std::vector<fs::path> ollama_stores(const StoreEnvironment& env) {
    if (!env.ollama_models.empty()) return {env.ollama_models};
    std::vector<fs::path> s = {fs::path(env.home) / ".ollama" / "models"};
    for (const auto& p : env.system_ollama_stores) s.emplace_back(p);
    return s;
}

std::string resolve_ollama(const std::string& spec, const StoreEnvironment& env) {
    const std::string ref = spec.substr(std::string_view("ollama:").size());
    // NAME[:TAG], NAME being [[HOST/]NAMESPACE/]MODEL.
    const auto last_slash = ref.rfind('/');
    const auto colon = ref.find(':', last_slash == std::string::npos ? 0 : last_slash);
    const std::string name = ref.substr(0, colon);
    const std::string tag = colon == std::string::npos ? "latest" : ref.substr(colon + 1);
    std::vector<std::string> parts = split(name, '/');
    if (parts.size() == 1) parts.insert(parts.begin(), "library");
    if (parts.size() == 2) parts.insert(parts.begin(), "registry.ollama.ai");
    const bool well_formed =
        parts.size() == 3 && plain_name(tag) && std::all_of(parts.begin(), parts.end(), plain_name);
    if (!well_formed)
        throw Error(spec +
                    ": not an Ollama model name (ollama:NAME, ollama:NAME:TAG, "
                    "ollama:NAMESPACE/NAME:TAG)");
    const std::string pull = "; get it with `ollama pull " + name + ":" + tag + "`";
    fs::path store, manifest;
    std::string looked;
    for (const fs::path& s : ollama_stores(env)) {
        const fs::path m = s / "manifests" / parts[0] / parts[1] / parts[2] / tag;
        looked += (looked.empty() ? "" : ", ") + m.string();
        if (is_regular(m)) {
            store = s;
            manifest = m;
            break;
        }
    }
    if (manifest.empty())
        throw Error(spec + ": not in Ollama's store (looked for " + looked +
                    "; OLLAMA_MODELS chooses another store)" + pull);
    const auto bytes = read_file_bytes(manifest.string(), std::size_t(1) << 20);
    const nlohmann::json doc = parse_json_input(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
        manifest.string());
    const nlohmann::json* layers = json_member(doc, "layers");
    if (layers && layers->is_array())
        for (const auto& layer : *layers) {
            const nlohmann::json* type = json_member(layer, "mediaType");
            const nlohmann::json* digest = json_member(layer, "digest");
            if (!type || !digest || !type->is_string() || !digest->is_string() ||
                type->get<std::string>() != "application/vnd.ollama.image.model")
                continue;
            // Only a sha256 digest names a blob (Ollama's own check): sha256:HEX -> sha256-HEX.
            std::string d = digest->get<std::string>();
            const bool sha =
                d.size() == 71 && d.rfind("sha256", 0) == 0 && (d[6] == ':' || d[6] == '-') &&
                std::all_of(d.begin() + 7, d.end(),
                            [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
            if (!sha)
                throw Error(manifest.string() + ": the model layer's digest is not sha256:HEX");
            d[6] = '-';
            const fs::path blob = store / "blobs" / d;
            if (!is_regular(blob))
                throw Error(spec + ": the manifest names " + blob.string() +
                            ", which is not there (a pull not finished?)" + pull);
            return blob.string();
        }
    throw Error(manifest.string() + ": no application/vnd.ollama.image.model layer (not a model?)");
}

}  // namespace

StoreEnvironment StoreEnvironment::from_process() {
    StoreEnvironment e;
    e.home = env_or_empty("HOME");
    e.xdg_cache_home = env_or_empty("XDG_CACHE_HOME");
    e.hf_home = env_or_empty("HF_HOME");
    // huggingface_hub reads the older HUGGINGFACE_HUB_CACHE when HF_HUB_CACHE is not set.
    e.hf_hub_cache = env_or_empty("HF_HUB_CACHE");
    if (e.hf_hub_cache.empty()) e.hf_hub_cache = env_or_empty("HUGGINGFACE_HUB_CACHE");
    e.ollama_models = env_or_empty("OLLAMA_MODELS");
    return e;
}

bool names_store_model(const std::string& spec) {
    if (spec.rfind("ollama:", 0) == 0) return true;
    const std::string repo = spec.substr(0, spec.find('@'));
    const std::vector<std::string> parts = split(repo, '/');
    return parts.size() == 2 && plain_name(parts[0]) && plain_name(parts[1]);
}

std::string resolve_store_model(const std::string& spec, const StoreEnvironment& env) {
    return spec.rfind("ollama:", 0) == 0 ? resolve_ollama(spec, env) : resolve_hf(spec, env);
}

}  // namespace kvs
