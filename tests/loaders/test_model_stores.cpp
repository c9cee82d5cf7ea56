// Models where people keep them (core/loaders/model_stores.h): a Hugging Face hub cache and an
// Ollama store, laid out here as huggingface_hub and Ollama lay them out, found offline.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/loaders/model_stores.h"
#include "core/util/error.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using test::run_cli;
using test::tiny_model;
namespace fs = std::filesystem;

namespace {

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kDigest = "6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa";

void write_text(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

// CACHE/models--ORG--NAME as huggingface_hub leaves it: the files in blobs/ (named by their hash;
// here by their name), the snapshot's entries links to them, refs/main naming the commit.
fs::path hf_cache_with(const fs::path& cache, const std::string& org, const std::string& name,
                       const fs::path& source_folder) {
    const fs::path repo = cache / ("models--" + org + "--" + name);
    const fs::path snapshot = repo / "snapshots" / kCommit;
    fs::create_directories(repo / "blobs");
    fs::create_directories(snapshot);
    for (const auto& e : fs::directory_iterator(source_folder)) {
        const std::string file = e.path().filename().string();
        fs::copy_file(e.path(), repo / "blobs" / ("blob-" + file));
        fs::create_symlink(fs::path("../../blobs") / ("blob-" + file), snapshot / file);
    }
    write_text(repo / "refs" / "main", kCommit);  // no line break, as huggingface_hub writes it
    return snapshot;
}

// STORE/manifests/registry.ollama.ai/NAMESPACE/NAME/TAG naming a GGUF blob, with a template
// layer before it as Ollama's manifests have.
fs::path ollama_store_with(const fs::path& store, const std::string& ns, const std::string& name,
                           const std::string& tag, const fs::path& gguf) {
    const fs::path blob = store / "blobs" / ("sha256-" + kDigest);
    fs::create_directories(blob.parent_path());
    fs::copy_file(gguf, blob, fs::copy_options::overwrite_existing);
    write_text(
        store / "manifests" / "registry.ollama.ai" / ns / name / tag,
        R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",)"
        R"("config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:)" +
            kDigest +
            R"(","size":485},"layers":[)"
            R"({"mediaType":"application/vnd.ollama.image.template","digest":"sha256:)" +
            std::string(64, 'e') +
            R"(","size":1429},)"
            R"({"mediaType":"application/vnd.ollama.image.model","digest":"sha256:)" +
            kDigest + R"(","size":1}]})");
    return blob;
}

fs::path hf_folder() {
    static const fs::path dir = [] {
        const fs::path d = test::temp_dir("stores-hf") / "folder";
        REQUIRE(run_cli({"export", tiny_model(), "--hf", d.string()}).exit_code == 0);
        return d;
    }();
    return dir;
}

fs::path gguf_file() {
    static const fs::path f = [] {
        const fs::path p = test::temp_dir("stores-gguf") / "tiny.gguf";
        REQUIRE(run_cli({"export", tiny_model(), "--gguf", p.string()}).exit_code == 0);
        return p;
    }();
    return f;
}

std::string error_of(const std::string& spec, const StoreEnvironment& env) {
    try {
        resolve_store_model(spec, env);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("what is written as a store's model", "[stores]") {
    CHECK(names_store_model("TinyLlama/TinyLlama-1.1B-Chat-v1.0"));
    CHECK(names_store_model("Qwen/Qwen2.5-0.5B@main"));
    CHECK(names_store_model("ollama:llama3.2"));
    CHECK(names_store_model("ollama:llama3.2:1b"));
    CHECK_FALSE(names_store_model("model.gguf"));
    CHECK_FALSE(names_store_model("a/b/c.bin"));
    CHECK_FALSE(names_store_model("../x"));
    CHECK_FALSE(names_store_model("/abs/path"));
}

TEST_CASE("ORG/NAME resolves from the Hugging Face cache where its variables say", "[stores]") {
    const fs::path root = test::temp_dir("stores-hf-cache");
    const fs::path cache = root / "hub-cache";
    const fs::path snapshot = hf_cache_with(cache, "kvs-org", "tiny", hf_folder());
    StoreEnvironment env;
    env.home = (root / "nohome").string();
    env.system_ollama_stores.clear();
    env.hf_hub_cache = cache.string();
    CHECK(resolve_store_model("kvs-org/tiny", env) == snapshot.string());
    CHECK(resolve_store_model("kvs-org/tiny@main", env) == snapshot.string());
    CHECK(resolve_store_model("kvs-org/tiny@" + kCommit, env) == snapshot.string());
    // A tag in refs/ names its commit too.
    write_text(cache / "models--kvs-org--tiny" / "refs" / "v1", kCommit + "\n");
    CHECK(resolve_store_model("kvs-org/tiny@v1", env) == snapshot.string());
    // HF_HOME/hub, then XDG_CACHE_HOME/huggingface/hub, then ~/.cache/huggingface/hub.
    const fs::path home = root / "home";
    hf_cache_with(root / "hf-home" / "hub", "kvs-org", "tiny", hf_folder());
    hf_cache_with(root / "xdg" / "huggingface" / "hub", "kvs-org", "tiny", hf_folder());
    hf_cache_with(home / ".cache" / "huggingface" / "hub", "kvs-org", "tiny", hf_folder());
    StoreEnvironment by_home;
    by_home.home = home.string();
    CHECK(resolve_store_model("kvs-org/tiny", by_home).rfind(home.string(), 0) == 0);
    by_home.xdg_cache_home = (root / "xdg").string();
    CHECK(resolve_store_model("kvs-org/tiny", by_home).rfind((root / "xdg").string(), 0) == 0);
    by_home.hf_home = (root / "hf-home").string();
    CHECK(resolve_store_model("kvs-org/tiny", by_home).rfind((root / "hf-home").string(), 0) == 0);
    // Not there: where it looked and how to get it, on one line.
    const std::string missing = error_of("kvs-org/other", env);
    CHECK(missing.find((cache / "models--kvs-org--other").string()) != std::string::npos);
    CHECK(missing.find("hf download kvs-org/other") != std::string::npos);
    CHECK(missing.find('\n') == std::string::npos);
    const std::string no_rev = error_of("kvs-org/tiny@v9", env);
    CHECK(no_rev.find("revision v9") != std::string::npos);
    CHECK(no_rev.find("--revision v9") != std::string::npos);
}

TEST_CASE("a GGUF repository in the cache gives its one GGUF file", "[stores]") {
    const fs::path root = test::temp_dir("stores-hf-gguf");
    const fs::path files = root / "files";
    fs::create_directories(files);
    fs::copy_file(gguf_file(), files / "tiny-Q8_0.gguf");
    write_text(files / "README.md", "a model card\n");
    const fs::path snapshot = hf_cache_with(root / "cache", "kvs-org", "tiny-GGUF", files);
    StoreEnvironment env;
    env.hf_hub_cache = (root / "cache").string();
    CHECK(resolve_store_model("kvs-org/tiny-GGUF", env) == (snapshot / "tiny-Q8_0.gguf").string());
    // Two: the user picks, and the message names them.
    fs::create_symlink(snapshot / "tiny-Q8_0.gguf", snapshot / "tiny-F32.gguf");
    const std::string two = error_of("kvs-org/tiny-GGUF", env);
    CHECK(two.find("2 GGUF files (tiny-F32.gguf, tiny-Q8_0.gguf)") != std::string::npos);
}

TEST_CASE("ollama:NAME and ollama:NAME:TAG resolve from Ollama's store", "[stores]") {
    const fs::path root = test::temp_dir("stores-ollama");
    const fs::path store = root / "models";
    const fs::path blob = ollama_store_with(store, "library", "tiny", "latest", gguf_file());
    ollama_store_with(store, "someone", "tiny", "q8", gguf_file());
    StoreEnvironment env;
    env.home = (root / "nohome").string();
    env.system_ollama_stores.clear();
    env.ollama_models = store.string();
    CHECK(resolve_store_model("ollama:tiny", env) == blob.string());
    CHECK(resolve_store_model("ollama:tiny:latest", env) == blob.string());
    CHECK(resolve_store_model("ollama:someone/tiny:q8", env) == blob.string());
    // ~/.ollama/models when OLLAMA_MODELS is not set.
    StoreEnvironment by_home;
    by_home.home = (root / "home").string();
    by_home.system_ollama_stores.clear();
    ollama_store_with(root / "home" / ".ollama" / "models", "library", "tiny", "latest",
                      gguf_file());
    CHECK(resolve_store_model("ollama:tiny", by_home).rfind((root / "home").string(), 0) == 0);
    // Not there, a blob missing, a name that is not one.
    const std::string missing = error_of("ollama:other:7b", env);
    CHECK(missing.find("library/other/7b") != std::string::npos);
    CHECK(missing.find("ollama pull other:7b") != std::string::npos);
    fs::remove(blob);
    CHECK(error_of("ollama:tiny", env).find("which is not there") != std::string::npos);
    CHECK(error_of("ollama:../../etc", env).find("not an Ollama model name") != std::string::npos);
}

TEST_CASE("the CLI opens a cached model by its name, offline", "[stores][cli]") {
    const fs::path root = test::temp_dir("stores-cli");
    const fs::path snapshot = hf_cache_with(root / "hf" / "hub", "kvs-org", "tiny", hf_folder());
    const fs::path blob =
        ollama_store_with(root / "ollama", "library", "tiny", "latest", gguf_file());
    const std::string hf_home = "HF_HOME=" + (root / "hf").string();
    const std::string ollama = "OLLAMA_MODELS=" + (root / "ollama").string();
    const auto info = test::run_cli_env({hf_home}, {"info", "kvs-org/tiny"});
    INFO(info.err);
    REQUIRE(info.exit_code == 0);
    CHECK(info.out.find("file: " + snapshot.string()) != std::string::npos);
    // The same text as from the folder itself; the model as the first word, as vLLM takes it.
    const auto direct = run_cli({"generate", hf_folder().string(), "-p", "the", "-n", "4"});
    const auto cached = test::run_cli_env({hf_home}, {"kvs-org/tiny", "-p", "the", "-n", "4"});
    CHECK(cached.exit_code == 0);
    CHECK(cached.out == direct.out);
    const auto from_ollama =
        test::run_cli_env({ollama}, {"generate", "-m", "ollama:tiny", "-p", "the", "-n", "4"});
    const auto gguf = run_cli({"generate", "-m", gguf_file().string(), "-p", "the", "-n", "4"});
    CHECK(from_ollama.exit_code == 0);
    CHECK(from_ollama.out == gguf.out);
    const auto oinfo = test::run_cli_env({ollama}, {"info", "ollama:tiny"});
    CHECK(oinfo.out.find("file: " + blob.string()) != std::string::npos);
    // Not found: exit 2, one line saying where it looked and the download command.
    const auto none = test::run_cli_env({hf_home}, {"info", "TinyLlama/TinyLlama-1.1B-Chat-v1.0"});
    CHECK(none.exit_code == 2);
    CHECK(none.err.find("models--TinyLlama--TinyLlama-1.1B-Chat-v1.0") != std::string::npos);
    CHECK(none.err.find("hf download TinyLlama/TinyLlama-1.1B-Chat-v1.0") != std::string::npos);
}
