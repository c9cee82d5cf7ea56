#pragma once
// Hugging Face files in the form the hub's own libraries write them, for tests: tokenizer.json as
// the `tokenizers` library serialises a byte-level BPE (every field of the model written, absent
// ones as null, "continuing_subword_prefix": "" and "end_of_word_suffix": "", ByteLevel
// post-processor and decoder, added tokens with all their flags), and config.json as
// `transformers` writes it (null for what is unset, its bookkeeping fields beside the shapes).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvs::test {

// The tokenizer families whose hub files differ in pre-tokenizer, post-processor and flags:
// GPT-2 (ByteLevel with its regex), Qwen2 (NFC normaliser, Split + ByteLevel) and Llama 3 (Split
// + ByteLevel, ignore_merges, a TemplateProcessing BOS inside a Sequence post-processor).
enum class HubTokenizer { gpt2, qwen2, llama3 };

// How merges are written: "LEFT RIGHT" strings (tokenizers before 0.20) or ["LEFT", "RIGHT"]
// pairs (0.20 and later).
enum class HubMerges { strings, pairs };

// tokenizer.json text for `vocab` (byte-level form, ids in order) and `merges` ("LEFT RIGHT"),
// with `added` tokens (special): a vocabulary entry's id when the vocabulary has it (GPT-2's
// <|endoftext|>), else the next ids after it. For Llama 3 the first added token is the BOS its
// template adds.
std::string hub_tokenizer_json(HubTokenizer kind, const std::vector<std::string>& vocab,
                               const std::vector<std::string>& merges,
                               const std::vector<std::string>& added, HubMerges form);

// `config` (kvscope's export --hf config.json) rewritten as transformers writes that
// architecture's: the same shapes, plus the fields transformers adds, the unset ones as null.
nlohmann::json hub_config_json(const nlohmann::json& config);

}  // namespace kvs::test
