// ByteBpeTokenizer's two file formats (JSON through nlohmann-json, header only, Debian's
// nlohmann-json3-dev): GPT-2's vocab.json + merges.txt, and Hugging Face's tokenizer.json.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/files/json_input.h"
#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/tokenizers/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace {

constexpr std::size_t kMaxTokenizerFile = std::size_t(256) << 20;  // Llama-3's is 9 MB

nlohmann::json read_json(const std::string& path) {
    const auto bytes = read_file_bytes(path, kMaxTokenizerFile);
    return parse_json_input(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
}

// A string member's text, "" when absent, null or not a string.
std::string_view text_of(const nlohmann::json& obj, std::string_view key) {
    const nlohmann::json* v = json_member(obj, key);
    return v && v->is_string() ? std::string_view(v->get_ref<const std::string&>())
                               : std::string_view();
}

// A true/false member, `fallback` when absent or null.
bool flag_of(const nlohmann::json& obj, std::string_view key, bool fallback, const FileField& f) {
    const nlohmann::json* v = json_member(obj, key);
    if (!v) return fallback;
    if (!v->is_boolean())
        throw Error(f.where() + " = " + json_excerpt(*v, 40) + " is not true or false");
    return v->get<bool>();
}

// A key from a file, as a field name in a message: cut, so a message stays a line.
std::string key_text(std::string_view k) {
    return k.size() > 40 ? std::string(k.substr(0, 40)) + "..." : std::string(k);
}

// token -> id (an object) as a vector indexed by id: `n` ids, 0..n-1, each taken once. `n` is
// what the file holds (its vocabulary and added tokens), so no id from the file can size
// anything beyond the file's own entries.
std::vector<std::string> tokens_by_id(const nlohmann::json& vocab, const std::string& path,
                                      const std::string& field, std::size_t n) {
    if (!vocab.is_object()) throw Error(path + ": " + field + " is not a JSON object");
    check_allocation(std::uint64_t(n) * (sizeof(std::string) + 1), {path, field});
    std::vector<std::string> tokens(n);
    std::vector<bool> seen(n, false);
    for (const auto& [text, id] : vocab.items()) {
        // The usual case without building a message; anything else through json_int, which
        // reads a whole number written as 12.0 and refuses the rest by name.
        const std::size_t i =
            id.is_number_unsigned() && id.get<std::uint64_t>() < n
                ? static_cast<std::size_t>(id.get<std::uint64_t>())
                : static_cast<std::size_t>(json_int(
                      id, 0, std::int64_t(n) - 1, {path, field + "[\"" + key_text(text) + "\"]"},
                      "a token id of its " + std::to_string(n) + " tokens"));
        if (seen[i])
            throw Error(path + ": token '" + key_text(text) + "' has id " + std::to_string(i) +
                        " (ids must be 0.." + std::to_string(n - 1) + ", each once)");
        tokens[i] = text;
        seen[i] = true;
    }
    return tokens;
}

// An added token: its id, its text, and whether added_tokens marks it special.
struct Added {
    std::size_t id;
    const std::string* content;
    bool special;
};

// BOS as the post-processor adds it: TemplateProcessing whose single sequence starts
// with a special token, alone or in a Sequence of processors (Llama 3's follows a ByteLevel
// one). The template calls it a SpecialToken whatever its added_tokens entry says, so it
// decodes to no text: encode then decode gives the text back after it.
void template_bos(const nlohmann::json& j, const std::vector<Added>& extra,
                  ByteBpeTokenizer::Options& o) {
    const nlohmann::json* post = json_member(j, "post_processor");
    if (const nlohmann::json* list = post && text_of(*post, "type") == "Sequence"
                                         ? json_member(*post, "processors")
                                         : nullptr;
        list && list->is_array()) {
        post = nullptr;
        for (const nlohmann::json& p : *list)
            if (text_of(p, "type") == "TemplateProcessing") post = &p;
    }
    if (post && text_of(*post, "type") == "TemplateProcessing") {
        const nlohmann::json* single = json_member(*post, "single");
        const nlohmann::json* first =
            single && single->is_array() && !single->empty() ? &(*single)[0] : nullptr;
        const nlohmann::json* special = first ? json_member(*first, "SpecialToken") : nullptr;
        if (special) {
            const std::string_view name = text_of(*special, "id");
            for (const Added& a : extra)
                if (*a.content == name) o.bos = static_cast<int>(a.id);
            o.add_bos = o.bos >= 0;
            if (o.add_bos) o.control[std::size_t(o.bos)] = true;
        }
    }
}

}  // namespace

ByteBpeTokenizer ByteBpeTokenizer::from_vocab_and_merges(const std::string& vocab_json,
                                                         const std::string& merges_txt) {
    const nlohmann::json vocab = read_json(vocab_json);
    auto tokens = tokens_by_id(vocab, vocab_json, "vocab", vocab.is_object() ? vocab.size() : 0);
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
    const auto bytes = read_file_bytes(path, kMaxTokenizerFile);
    return from_hf_json_text(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
}

ByteBpeTokenizer ByteBpeTokenizer::from_hf_json_text(std::string_view text,
                                                     const std::string& path) {
    const nlohmann::json j = parse_json_input(text, path);
    const std::string where = path + ": tokenizer.json";
    auto fail = [&](const std::string& why) -> void { throw Error(where + ": " + why); };
    auto field = [&](std::string name) { return FileField{where, std::move(name)}; };
    const nlohmann::json* model = json_member(j, "model");  // nullptr unless j is an object
    if (!model || !model->is_object()) fail("no \"model\" object");
    const auto& m = *model;
    if (const nlohmann::json* t = json_member(m, "type");
        t && json_string(*t, field("model.type")) != "BPE")
        fail("model type '" + key_text(t->get_ref<const std::string&>()) + "' is not BPE");
    // The hub's files say "no dropout, no prefix, no suffix" as null, 0 and "" (the tokenizers
    // library writes "dropout": null, "continuing_subword_prefix": "", "end_of_word_suffix": "").
    if (const nlohmann::json* v = json_member(m, "dropout");
        v && !(v->is_number() && v->get<double>() == 0))
        fail("model.dropout " + json_excerpt(*v) + " is not supported (BPE dropout)");
    for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (const nlohmann::json* v = json_member(m, k);
            v && !(v->is_string() && v->get_ref<const std::string&>().empty()))
            fail(std::string("model.") + k + " " + json_excerpt(*v) + " is not supported");

    Options o;
    // Llama 3's: whole pieces first
    o.ignore_merges = flag_of(m, "ignore_merges", false, field("model.ignore_merges"));
    // The pre-tokenizer: GPT-2's ByteLevel (its regex), SmolLM's Digits + ByteLevel, or
    // Llama 3's / Qwen2's Split regex + ByteLevel without its own regex.
    static const nlohmann::json kNone;
    const nlohmann::json* pre_member = json_member(j, "pre_tokenizer");
    const nlohmann::json& pre = pre_member ? *pre_member : kNone;
    auto byte_level = [&](const nlohmann::json& p, bool regex = true) {
        if (!p.is_object() || text_of(p, "type") != "ByteLevel") return false;
        if (flag_of(p, "add_prefix_space", false, field("pre_tokenizer.add_prefix_space")))
            fail("ByteLevel add_prefix_space is not supported");
        return flag_of(p, "use_regex", true, field("pre_tokenizer.use_regex")) == regex;
    };
    // Split by one of the regexes kvscope has written out (core/tokenizers/byte_bpe_split.h),
    // pieces kept as they are ("Isolated"); the regex text is compared exactly.
    auto split_regex = [&](const nlohmann::json& p) -> std::string_view {
        if (!p.is_object() || text_of(p, "type") != "Split" ||
            text_of(p, "behavior") != "Isolated" ||
            flag_of(p, "invert", false, field("pre_tokenizer.invert")))
            return {};
        const nlohmann::json* pattern = json_member(p, "pattern");
        return pattern ? text_of(*pattern, "Regex") : std::string_view();
    };
    const nlohmann::json* steps = json_member(pre, "pretokenizers");
    const bool sequence2 =
        text_of(pre, "type") == "Sequence" && steps && steps->is_array() && steps->size() == 2;
    if (byte_level(pre)) {
        o.split = ByteBpeSplit::Gpt2;
    } else if (sequence2 && byte_level((*steps)[1], false) &&
               split_regex((*steps)[0]) == kLlama3SplitRegex) {
        o.split = ByteBpeSplit::Llama3;
    } else if (sequence2 && byte_level((*steps)[1], false) &&
               split_regex((*steps)[0]) == kQwen2SplitRegex) {
        o.split = ByteBpeSplit::Qwen2;
    } else if (sequence2 && text_of((*steps)[0], "type") == "Digits" &&
               flag_of((*steps)[0], "individual_digits", false,
                       field("pre_tokenizer.pretokenizers[0].individual_digits")) &&
               byte_level((*steps)[1])) {
        o.split = ByteBpeSplit::SmolLm;
    } else {
        fail("pre_tokenizer " + json_excerpt(pre) +
             " is not supported (kvscope splits as GPT-2's ByteLevel, SmolLM's "
             "Digits + ByteLevel, and Llama 3's and Qwen2's Split + ByteLevel do)");
    }

    // Added tokens take their ids beside (or beyond) the model's vocabulary. Every id from 0 to
    // the largest must be some entry's, so there are at most as many ids as entries: that count
    // bounds every id before one indexes or sizes anything.
    static const nlohmann::json kNoVocab = nlohmann::json::object();
    static const nlohmann::json kNoAdded = nlohmann::json::array();
    const nlohmann::json* vocab_member = json_member(m, "vocab");
    const nlohmann::json& vocab = vocab_member ? *vocab_member : kNoVocab;
    const nlohmann::json* added_member = json_member(j, "added_tokens");
    const nlohmann::json& added = added_member ? *added_member : kNoAdded;
    if (!added.is_array()) fail("added_tokens = " + json_excerpt(added) + " is not a list");
    const std::size_t entries = (vocab.is_object() ? vocab.size() : 0) + added.size();
    const std::int64_t max_id = std::min<std::int64_t>(std::int64_t(entries), kMaxVocabulary) - 1;
    const std::string ids_of_file =
        "a token id of its " + std::to_string(entries) + " vocab and added tokens";
    std::vector<Added> extra;
    std::size_t n = vocab.is_object() ? vocab.size() : 0;
    for (std::size_t i = 0; i < added.size(); ++i) {
        const std::string at = "added_tokens[" + std::to_string(i) + "]";
        const nlohmann::json& a = added[i];
        if (!a.is_object()) fail(at + " = " + json_excerpt(a, 40) + " is not an object");
        const nlohmann::json* id = json_member(a, "id");
        const nlohmann::json* content = json_member(a, "content");
        if (!id || !content) fail(at + " has no id or no content");
        const auto k =
            static_cast<std::size_t>(json_int(*id, 0, max_id, field(at + ".id"), ids_of_file));
        extra.push_back({k, &json_string(*content, field(at + ".content")),
                         flag_of(a, "special", false, field(at + ".special"))});
        n = std::max(n, k + 1);
    }
    auto tokens = tokens_by_id(vocab, where, "model.vocab", n);
    o.control.assign(tokens.size(), false);
    for (const Added& a : extra) {
        tokens[a.id] = *a.content;
        o.control[a.id] = a.special;
    }
    for (std::size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i].empty()) fail("no token has id " + std::to_string(i));

    std::vector<std::string> merges;
    if (const nlohmann::json* list = json_member(m, "merges")) {
        if (!list->is_array()) fail("model.merges = " + json_excerpt(*list) + " is not a list");
        merges.reserve(list->size());
        for (std::size_t i = 0; i < list->size(); ++i) {
            const nlohmann::json& mg = (*list)[i];
            const std::string at = "model.merges[" + std::to_string(i) + "]";
            if (mg.is_string())
                merges.push_back(mg.get<std::string>());
            else if (mg.is_array() && mg.size() == 2) {  // newer files: ["LEFT", "RIGHT"]
                std::string pair = json_string(mg[0], field(at + "[0]"));
                merges.push_back(pair.append(" ").append(json_string(mg[1], field(at + "[1]"))));
            } else
                fail(at + " = " + json_excerpt(mg, 40) +
                     " is neither \"LEFT RIGHT\" nor [LEFT, RIGHT]");
        }
    }
    template_bos(j, extra, o);
    return ByteBpeTokenizer(std::move(tokens), merges, std::move(o), path);
}

}  // namespace kvs
