#pragma once
// The pre-tokenizer of byte-level BPE: text cut into pieces before any merge, so no token spans
// two pieces. GPT-2's rule is the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// applied left to right (the first alternative that matches at a position wins, each as greedy
// as it goes); here it is written out by hand over UTF-8 code points with the Unicode classes of
// core/tokenizers/unicode_class.h, no regex library. SmolLM's rule first isolates every \p{N} code
// point (HF's Digits(individual_digits) pre-tokenizer) and applies GPT-2's rule to the text
// between. Llama 3's rule (its tokenizer.json's Split regex) is
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
// and Qwen2's the same with \p{N} (one digit a piece) for \p{N}{1,3}.
#include <string_view>
#include <vector>

namespace kvs {

enum class ByteBpeSplit {
    Gpt2,    // GGUF tokenizer.ggml.pre "gpt2" (or absent), HF GPT-2's ByteLevel
    SmolLm,  // GGUF "smollm": every digit alone, then GPT-2's rule
    Llama3,  // GGUF "llama-bpe" (and "llama3"), Llama 3's Split regex
    Qwen2,   // GGUF "qwen2", Qwen2's Split regex
};

// The rule's name in words ("GPT-2", "SmolLM", "Llama 3", "Qwen2").
const char* byte_bpe_split_name(ByteBpeSplit rule);
// The Split regex of Llama 3's / Qwen2's tokenizer.json, as the file spells it.
extern const char* const kLlama3SplitRegex;
extern const char* const kQwen2SplitRegex;

// The pieces, in order; they concatenate back to `text` exactly (malformed UTF-8 included: a
// byte that is not part of a well-formed sequence is a symbol of its own, neither letter, number
// nor space).
std::vector<std::string_view> split_for_byte_bpe(std::string_view text, ByteBpeSplit rule);

}  // namespace kvs
