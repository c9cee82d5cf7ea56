// Hugging Face files in the form the hub's libraries write them (tests/support/hub_files.h):
// tokenizer.json with its null and empty fields for GPT-2, Qwen2 and Llama 3, merges as strings and
// as pairs, must load and encode as the same vocabulary and merges built directly; Hugging Face
// folders of the three architectures with such a tokenizer.json and a transformers-style
// config.json (nulls, bookkeeping fields) must open and run. (GPT-2's real vocabulary in this form
// against GPT-2's own encoder: tests/peer/peer_gpt2_tokenizer.cpp.)
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/loaders/hf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "tests/support/gpt2_model.h"
#include "tests/support/greedy_runs.h"
#include "tests/support/hub_files.h"
#include "tests/support/qwen2_model.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using test::HubMerges;
using test::HubTokenizer;
namespace fs = std::filesystem;

namespace {

// The 256 byte characters, then letter pairs "aa", "ab", ... merged in that order, `n` tokens.
struct PairVocab {
    std::vector<std::string> tokens, merges;
};

PairVocab pair_vocab(int n) {
    const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    PairVocab v;
    v.tokens.assign(byte_level_chars().begin(), byte_level_chars().end());
    for (std::size_t i = 0; int(v.tokens.size()) < n; ++i) {
        const char a = letters[i / letters.size()], b = letters[i % letters.size()];
        v.tokens.push_back(std::string{a, b});
        v.merges.push_back(std::string{a, ' ', b});
    }
    return v;
}

const char* name_of(HubTokenizer k) {
    return k == HubTokenizer::gpt2 ? "gpt2" : k == HubTokenizer::qwen2 ? "qwen2" : "llama3";
}

const std::vector<std::string> kTexts = {"hello world", "ab ba aab  abc\n\nAB 123 4567",
                                         "don't   stop\t\ttabs", "\xe4\xbd\xa0\xe5\xa5\xbd 99"};

}  // namespace

TEST_CASE(
    "tokenizer.json as the hub writes it: GPT-2, Qwen2 and Llama 3 forms encode as their "
    "vocabulary and merges do",
    "[byte_bpe][hub]") {
    const PairVocab v = pair_vocab(400);
    const std::string special = "<|endoftext|>";
    for (HubTokenizer kind : {HubTokenizer::gpt2, HubTokenizer::qwen2, HubTokenizer::llama3})
        for (HubMerges form : {HubMerges::strings, HubMerges::pairs}) {
            INFO(name_of(kind) << (form == HubMerges::pairs ? ", merges as pairs" : ""));
            const std::string text =
                test::hub_tokenizer_json(kind, v.tokens, v.merges, {special}, form);
            // The fields that once made a hub file refused are there, as the hub has them.
            REQUIRE(text.find("\"continuing_subword_prefix\": \"\"") != std::string::npos);
            REQUIRE(text.find("\"end_of_word_suffix\": \"\"") != std::string::npos);
            REQUIRE(text.find("\"dropout\": null") != std::string::npos);
            const ByteBpeTokenizer hub = ByteBpeTokenizer::from_hf_json_text(text, "hub.json");
            ByteBpeTokenizer::Options o;
            o.split = kind == HubTokenizer::gpt2    ? ByteBpeSplit::Gpt2
                      : kind == HubTokenizer::qwen2 ? ByteBpeSplit::Qwen2
                                                    : ByteBpeSplit::Llama3;
            o.ignore_merges = kind == HubTokenizer::llama3;
            auto tokens = v.tokens;
            tokens.push_back(special);
            const ByteBpeTokenizer plain(tokens, v.merges, o, "plain");
            CHECK(hub.vocab_size() == 401);
            CHECK(hub.merge_count() == v.merges.size());
            const int bos = 400;
            // Llama 3 adds its BOS by a template inside a Sequence post-processor; the others none.
            CHECK(hub.bos() == (kind == HubTokenizer::llama3 ? bos : -1));
            for (const std::string& s : kTexts) {
                INFO(s);
                auto want = plain.encode(s);
                if (kind == HubTokenizer::llama3) want.insert(want.begin(), bos);
                const auto got = hub.encode(s);
                CHECK(got == want);
                std::string back;
                for (int id : got) back += hub.decode(-1, id);
                CHECK(back == s);
            }
        }
    // What the hub writes for "none" is accepted; anything else is still refused by name.
    const std::string gpt2 = test::hub_tokenizer_json(HubTokenizer::gpt2, v.tokens, v.merges,
                                                      {special}, HubMerges::pairs);
    auto with = [&](const std::string& from, const std::string& to) {
        std::string s = gpt2;
        const auto at = s.find(from);
        REQUIRE(at != std::string::npos);
        return s.replace(at, from.size(), to);
    };
    CHECK_NOTHROW(ByteBpeTokenizer::from_hf_json_text(with("\"dropout\": null", "\"dropout\": 0.0"),
                                                      "t.json"));
    CHECK_THROWS_WITH(ByteBpeTokenizer::from_hf_json_text(
                          with("\"dropout\": null", "\"dropout\": 0.1"), "t.json"),
                      Catch::Contains("model.dropout 0.1 is not supported"));
    CHECK_THROWS_WITH(
        ByteBpeTokenizer::from_hf_json_text(
            with("\"continuing_subword_prefix\": \"\"", "\"continuing_subword_prefix\": \"##\""),
            "t.json"),
        Catch::Contains("model.continuing_subword_prefix \"##\" is not supported"));
    CHECK_THROWS_WITH(
        ByteBpeTokenizer::from_hf_json_text(
            with("\"end_of_word_suffix\": \"\"", "\"end_of_word_suffix\": \"</w>\""), "t.json"),
        Catch::Contains("model.end_of_word_suffix \"</w>\" is not supported"));
}

TEST_CASE(
    "Hugging Face folders as the hub writes them: config.json with nulls, byte-level "
    "tokenizer.json, for Llama, Qwen2 and GPT-2",
    "[hf][hub]") {
    const auto dir = test::temp_dir("hub-folders");
    const auto base = open_model("default");
    const auto& tok = dynamic_cast<const BpeTokenizer&>(base->tokenizer());
    const int V = base->config().vocab_size;
    const PairVocab v = pair_vocab(V - 1);  // and one added token
    const auto qwen2 = test::with_qkv_biases(*base, 7);
    const auto gpt2 = test::random_gpt2(*base, 13);
    struct Case {
        const char* name;
        const TransformerModel* model;
        HubTokenizer tokenizer;
        const char* added;
    };
    for (const Case& c : {Case{"llama", &dynamic_cast<const TransformerModel&>(*base),
                               HubTokenizer::llama3, "<|begin_of_text|>"},
                          Case{"qwen2", qwen2.get(), HubTokenizer::qwen2, "<|endoftext|>"},
                          Case{"gpt2", gpt2.get(), HubTokenizer::gpt2, "<|endoftext|>"}}) {
        INFO(c.name);
        const fs::path folder = dir / c.name;
        write_hf_llama(folder.string(), c.model->config(), c.model->weights(), tok, GgmlType::F32,
                       0);
        fs::remove(folder / "tokenizer.bin");
        const auto config = nlohmann::json::parse(test::slurp(folder / "config.json"));
        const nlohmann::json hub = test::hub_config_json(config);
        // Fields the writer did not have are there, null where transformers writes null.
        CHECK(hub.size() > config.size());
        CHECK(hub.at("pad_token_id").is_null());
        std::ofstream(folder / "config.json") << hub.dump(2) << "\n";
        std::ofstream(folder / "tokenizer.json") << test::hub_tokenizer_json(
            c.tokenizer, v.tokens, v.merges, {c.added}, HubMerges::pairs);
        const auto m = open_model(folder.string());
        CHECK(m->config().describe() == c.model->config().describe());
        CHECK(m->tokenizer().vocab_size() == V);
        CHECK(m->format().find("tokenizer.json (byte-level BPE)") != std::string::npos);
        const auto ids = m->tokenizer().encode("ab ba");
        REQUIRE(!ids.empty());
        CHECK(!test::greedy_run(*m, "ab ba", 4).logits.empty());  // it runs
    }
}
