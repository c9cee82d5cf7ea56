#include "tests/support/hub_files.h"

#include <algorithm>

#include "core/tokenizers/byte_bpe_split.h"

namespace kvs::test {
namespace {

using ojson = nlohmann::ordered_json;

// ByteLevel as a pre-tokenizer, post-processor or decoder: the tokenizers library writes all
// three flags.
ojson byte_level(bool prefix, bool trim, bool regex) {
    return {{"type", "ByteLevel"},
            {"add_prefix_space", prefix},
            {"trim_offsets", trim},
            {"use_regex", regex}};
}

ojson split(const char* regex) {
    return {{"type", "Split"},
            {"pattern", {{"Regex", regex}}},
            {"behavior", "Isolated"},
            {"invert", false}};
}

}  // namespace

std::string hub_tokenizer_json(HubTokenizer kind, const std::vector<std::string>& vocab,
                               const std::vector<std::string>& merges,
                               const std::vector<std::string>& added, HubMerges form) {
    ojson j;
    j["version"] = "1.0";
    j["truncation"] = nullptr;
    j["padding"] = nullptr;
    ojson tokens = ojson::array();
    std::vector<std::size_t> added_ids;  // a vocabulary entry's id (GPT-2's <|endoftext|>), or next
    for (const std::string& a : added) {
        const auto at = std::find(vocab.begin(), vocab.end(), a);
        added_ids.push_back(at != vocab.end() ? std::size_t(at - vocab.begin())
                                              : vocab.size() + added_ids.size());
    }
    for (std::size_t i = 0; i < added.size(); ++i)
        tokens.push_back({{"id", added_ids[i]},
                          {"content", added[i]},
                          {"single_word", false},
                          {"lstrip", false},
                          {"rstrip", false},
                          {"normalized", false},
                          {"special", true}});
    j["added_tokens"] = tokens;
    switch (kind) {
        case HubTokenizer::gpt2:
            j["normalizer"] = nullptr;
            j["pre_tokenizer"] = byte_level(false, true, true);
            j["post_processor"] = byte_level(true, false, true);
            j["decoder"] = byte_level(true, true, true);
            break;
        case HubTokenizer::qwen2:
            j["normalizer"] = {{"type", "NFC"}};
            j["pre_tokenizer"] = {
                {"type", "Sequence"},
                {"pretokenizers", {split(kQwen2SplitRegex), byte_level(false, false, false)}}};
            j["post_processor"] = byte_level(false, false, false);
            j["decoder"] = byte_level(false, false, false);
            break;
        case HubTokenizer::llama3: {
            j["normalizer"] = nullptr;
            j["pre_tokenizer"] = {
                {"type", "Sequence"},
                {"pretokenizers", {split(kLlama3SplitRegex), byte_level(false, true, false)}}};
            const std::string bos = added.at(0);
            auto special = [&](int type_id) {
                return ojson{{"SpecialToken", {{"id", bos}, {"type_id", type_id}}}};
            };
            auto sequence = [](const char* id, int type_id) {
                return ojson{{"Sequence", {{"id", id}, {"type_id", type_id}}}};
            };
            const ojson tp = {
                {"type", "TemplateProcessing"},
                {"single", {special(0), sequence("A", 0)}},
                {"pair", {special(0), sequence("A", 0), special(1), sequence("B", 1)}},
                {"special_tokens",
                 {{bos, {{"id", bos}, {"ids", {added_ids.at(0)}}, {"tokens", {bos}}}}}}};
            j["post_processor"] = {{"type", "Sequence"},
                                   {"processors", {byte_level(true, false, true), tp}}};
            j["decoder"] = byte_level(true, true, true);
            break;
        }
    }
    ojson model;
    model["type"] = "BPE";
    model["dropout"] = nullptr;
    model["unk_token"] = nullptr;
    model["continuing_subword_prefix"] = "";
    model["end_of_word_suffix"] = "";
    model["fuse_unk"] = false;
    model["byte_fallback"] = false;
    model["ignore_merges"] = kind == HubTokenizer::llama3;
    ojson v = ojson::object();
    for (std::size_t i = 0; i < vocab.size(); ++i) v[vocab[i]] = i;
    model["vocab"] = v;
    ojson m = ojson::array();
    for (const std::string& s : merges) {
        const auto sp = s.find(' ');
        if (form == HubMerges::strings)
            m.push_back(s);
        else
            m.push_back({s.substr(0, sp), s.substr(sp + 1)});
    }
    model["merges"] = m;
    j["model"] = model;
    return j.dump(2);
}

nlohmann::json hub_config_json(const nlohmann::json& config) {
    nlohmann::json j = config;
    const std::string type = config.value("model_type", "");
    auto set = [&](const char* key, nlohmann::json v) {
        if (!j.contains(key)) j[key] = std::move(v);
    };
    set("initializer_range", 0.02);
    set("torch_dtype", "float32");
    set("transformers_version", "4.46.3");
    set("use_cache", true);
    set("pad_token_id", nullptr);
    if (type == "gpt2") {
        for (const char* k : {"attn_pdrop", "embd_pdrop", "resid_pdrop", "summary_first_dropout"})
            set(k, 0.1);
        // GPT2Config's null for "4 x n_embd", where it is that.
        if (j.value("n_inner", 0) == 4 * j.value("n_embd", 0)) j["n_inner"] = nullptr;
        set("n_ctx", j.value("n_positions", 0));
        set("summary_activation", nullptr);
        set("summary_proj_to_labels", true);
        set("summary_type", "cls_index");
        set("summary_use_proj", true);
        set("reorder_and_upcast_attn", false);
        set("scale_attn_by_inverse_layer_idx", false);
        set("scale_attn_weights", true);
        set("task_specific_params",
            {{"text-generation", {{"do_sample", true}, {"max_length", 50}}}});
        return j;
    }
    set("attention_dropout", 0.0);
    set("rope_scaling", nullptr);
    set("bos_token_id", nullptr);
    set("eos_token_id", nullptr);
    if (type == "qwen2") {
        // Newer transformers write sliding_window null when use_sliding_window is false.
        set("use_sliding_window", false);
        set("sliding_window", nullptr);
        set("max_window_layers", j.value("num_hidden_layers", 0));
        set("layer_types",
            std::vector<std::string>(j.value("num_hidden_layers", 0), "full_attention"));
    } else {
        set("attention_bias", false);
        set("mlp_bias", false);
        set("pretraining_tp", 1);
        set("head_dim", nullptr);
    }
    return j;
}

}  // namespace kvs::test
