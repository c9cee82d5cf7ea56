// ByteBpeTokenizer's two file formats (JSON through nlohmann-json, header only, Debian's
// nlohmann-json3-dev): GPT-2's vocab.json + merges.txt, and Hugging Face's tokenizer.json.
#include <nlohmann/json.hpp>

#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace {

constexpr std::size_t kMaxTokenizerFile = std::size_t(256) << 20;  // Llama-3's is 9 MB

nlohmann::json read_json(const std::string& path) {
    const auto bytes = read_file_bytes(path, kMaxTokenizerFile);
    auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw Error(path + ": not valid JSON");
    return j;
}

// token -> id (an object) as a vector indexed by id; ids must be 0..n-1, each once.
std::vector<std::string> tokens_by_id(const nlohmann::json& vocab, const std::string& path,
                                      std::size_t at_least = 0) {
    if (!vocab.is_object()) throw Error(path + ": the vocabulary is not a JSON object");
    std::vector<std::string> tokens(std::max(vocab.size(), at_least));
    std::vector<bool> seen(tokens.size(), false);
    for (const auto& [text, id] : vocab.items()) {
        if (!id.is_number_unsigned() || id.get<std::uint64_t>() >= tokens.size() ||
            seen[id.get<std::size_t>()])
            throw Error(path + ": token '" + text + "' has id " + id.dump() + " (ids must be 0.." +
                        std::to_string(tokens.size() - 1) + ", each once)");
        tokens[id.get<std::size_t>()] = text;
        seen[id.get<std::size_t>()] = true;
    }
    return tokens;
}

}  // namespace

ByteBpeTokenizer ByteBpeTokenizer::from_vocab_and_merges(const std::string& vocab_json,
                                                         const std::string& merges_txt) {
    auto tokens = tokens_by_id(read_json(vocab_json), vocab_json);
    const auto bytes = read_file_bytes(merges_txt, kMaxTokenizerFile);
    std::vector<std::string> merges;
    std::string line;
    for (std::size_t i = 0; i <= bytes.size(); ++i) {
        if (i < bytes.size() && bytes[i] != '\n') {
            line += static_cast<char>(bytes[i]);
            continue;
        }
        if (!line.empty() && line.back() == '\r') line.pop_back();
        // "#version: 0.2" heads GPT-2's file; blank lines (the last one) carry nothing.
        if (!line.empty() && !(merges.empty() && line.rfind("#version", 0) == 0))
            merges.push_back(line);
        line.clear();
    }
    return ByteBpeTokenizer(std::move(tokens), merges, Options{}, merges_txt);
}

ByteBpeTokenizer ByteBpeTokenizer::from_hf_json(const std::string& path) {
    const nlohmann::json j = read_json(path);
    auto fail = [&](const std::string& why) -> void {
        throw Error(path + ": tokenizer.json: " + why);
    };
    try {
        if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
            fail("no \"model\" object");
        const auto& m = j["model"];
        if (m.value("type", std::string("BPE")) != "BPE")
            fail("model type '" + m["type"].get<std::string>() + "' is not BPE");
        if (m.contains("dropout") && !m["dropout"].is_null()) fail("BPE dropout is not supported");
        for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
            if (m.contains(k) && !m[k].is_null() && m[k] != "")
                fail(std::string("model.") + k + " " + m[k].dump() + " is not supported");

        Options o;
        o.ignore_merges = m.value("ignore_merges", false);  // Llama 3's: whole pieces first
        // The pre-tokenizer: GPT-2's ByteLevel (its regex), SmolLM's Digits + ByteLevel, or
        // Llama 3's / Qwen2's Split regex + ByteLevel without its own regex.
        const auto& pre = j.value("pre_tokenizer", nlohmann::json());
        auto byte_level = [&](const nlohmann::json& p, bool regex = true) {
            if (!p.is_object() || p.value("type", std::string()) != "ByteLevel") return false;
            if (p.value("add_prefix_space", false))
                fail("ByteLevel add_prefix_space is not supported");
            return p.value("use_regex", true) == regex;
        };
        // Split by one of the regexes kvscope has written out (core/tokenizers/byte_bpe_split.h),
        // pieces kept as they are ("Isolated"); the regex text is compared exactly.
        auto split_regex = [&](const nlohmann::json& p) -> std::string {
            if (!p.is_object() || p.value("type", std::string()) != "Split" ||
                p.value("behavior", std::string()) != "Isolated" || p.value("invert", false) ||
                !p.contains("pattern") || !p["pattern"].is_object() ||
                !p["pattern"].contains("Regex") || !p["pattern"]["Regex"].is_string())
                return {};
            return p["pattern"]["Regex"].get<std::string>();
        };
        const bool sequence2 = pre.is_object() && pre.value("type", std::string()) == "Sequence" &&
                               pre.contains("pretokenizers") && pre["pretokenizers"].is_array() &&
                               pre["pretokenizers"].size() == 2;
        if (byte_level(pre)) {
            o.split = ByteBpeSplit::Gpt2;
        } else if (sequence2 && byte_level(pre["pretokenizers"][1], false) &&
                   split_regex(pre["pretokenizers"][0]) == kLlama3SplitRegex) {
            o.split = ByteBpeSplit::Llama3;
        } else if (sequence2 && byte_level(pre["pretokenizers"][1], false) &&
                   split_regex(pre["pretokenizers"][0]) == kQwen2SplitRegex) {
            o.split = ByteBpeSplit::Qwen2;
        } else if (sequence2 && pre["pretokenizers"][0].value("type", std::string()) == "Digits" &&
                   pre["pretokenizers"][0].value("individual_digits", false) &&
                   byte_level(pre["pretokenizers"][1])) {
            o.split = ByteBpeSplit::SmolLm;
        } else {
            fail("pre_tokenizer " + pre.dump().substr(0, 80) +
                 " is not supported (kvscope splits as GPT-2's ByteLevel, SmolLM's "
                 "Digits + ByteLevel, and Llama 3's and Qwen2's Split + ByteLevel do)");
        }

        // Added tokens take their ids beside (or beyond) the model's vocabulary.
        std::size_t n = m.contains("vocab") && m["vocab"].is_object() ? m["vocab"].size() : 0;
        const auto added = j.value("added_tokens", nlohmann::json::array());
        for (const auto& a : added) n = std::max(n, a.at("id").get<std::size_t>() + 1);
        auto tokens = tokens_by_id(m.value("vocab", nlohmann::json()), path, n);
        o.control.assign(tokens.size(), false);
        for (const auto& a : added) {
            const auto id = a.at("id").get<std::size_t>();
            tokens[id] = a.at("content").get<std::string>();
            o.control[id] = a.value("special", false);
        }
        for (std::size_t i = 0; i < tokens.size(); ++i)
            if (tokens[i].empty()) fail("no token has id " + std::to_string(i));

        std::vector<std::string> merges;
        for (const auto& mg : m.value("merges", nlohmann::json::array())) {
            if (mg.is_string())
                merges.push_back(mg.get<std::string>());
            else if (mg.is_array() && mg.size() == 2)  // newer files: ["LEFT", "RIGHT"]
                merges.push_back(mg[0].get<std::string>() + " " + mg[1].get<std::string>());
            else
                fail("a merge is neither \"LEFT RIGHT\" nor [LEFT, RIGHT]");
        }
        // BOS as the post-processor adds it: TemplateProcessing whose single sequence starts
        // with a special token.
        const auto& post = j.value("post_processor", nlohmann::json());
        if (post.is_object() && post.value("type", std::string()) == "TemplateProcessing" &&
            post.contains("single") && !post["single"].empty() &&
            post["single"][0].contains("SpecialToken")) {
            const auto name = post["single"][0]["SpecialToken"].at("id").get<std::string>();
            for (const auto& a : added)
                if (a.at("content").get<std::string>() == name) o.bos = a.at("id").get<int>();
            o.add_bos = o.bos >= 0;
        }
        return ByteBpeTokenizer(std::move(tokens), merges, std::move(o), path);
    } catch (const nlohmann::json::exception& e) {
        throw Error(path + ": tokenizer.json: " + e.what());
    }
}

}  // namespace kvs
