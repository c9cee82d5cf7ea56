#pragma once
// The pre-tokenizer of byte-level BPE: text cut into pieces before any merge, so no token spans
// two pieces. GPT-2's rule is the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// applied left to right (the first alternative that matches at a position wins, each as greedy
// as it goes); here it is written out by hand over UTF-8 code points with the Unicode classes of
// core/unicode_class.h, no regex library. SmolLM's rule first isolates every \p{N} code point
// (HF's Digits(individual_digits) pre-tokenizer) and applies GPT-2's rule to the text between.
#include <string_view>
#include <vector>

namespace kvs {

enum class ByteBpeSplit {
    Gpt2,    // GGUF tokenizer.ggml.pre "gpt2" (or absent), HF GPT-2's ByteLevel
    SmolLm,  // GGUF "smollm": every digit alone, then GPT-2's rule
};

// The pieces, in order; they concatenate back to `text` exactly (malformed UTF-8 included: a
// byte that is not part of a well-formed sequence is a symbol of its own, neither letter, number
// nor space).
std::vector<std::string_view> split_for_byte_bpe(std::string_view text, ByteBpeSplit rule);

}  // namespace kvs
