#pragma once
// Byte-level BPE (GPT-2, Llama-3, Qwen, SmolLM): text is cut by the pre-tokenizer
// (core/tokenizers/byte_bpe_split.h), each piece's UTF-8 bytes become one symbol per byte, and
// merges are applied in rank order (the pair whose merge comes first in the merges list, leftmost
// on ties: core/tokenizers/llama_vocab_rules.h's merge_by_score with score = -rank). The vocabulary
// stores bytes as GPT-2's bytes_to_unicode characters (printable bytes stand for themselves, the
// other 68 are U+0100.. in byte order: a space is 'Ġ', a newline 'Ċ'), so decoding maps them back
// to bytes and decode(encode(x)) == x for every byte string. Loaded from a vocab.json + merges.txt
// pair, a Hugging Face tokenizer.json (model.vocab and model.merges), or GGUF metadata
// (tokenizer.ggml.model = "gpt2": tokens and merges).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/tokenizers/byte_bpe_split.h"
#include "core/tokenizers/tokenizer.h"

namespace kvs {

class GgufFile;

// GPT-2's bytes_to_unicode: the character (as UTF-8) that stands for byte b in the vocabulary.
const std::array<std::string, 256>& byte_level_chars();

class ByteBpeTokenizer final : public Tokenizer {
  public:
    struct Options {
        ByteBpeSplit split = ByteBpeSplit::Gpt2;
        // Llama 3's rule: a piece that is a token as a whole is that token, unmerged.
        bool ignore_merges = false;
        int bos = -1, eos = -1;
        bool add_bos = false;
        std::vector<bool> control;  // per id: a special token (decodes to nothing); may be empty
    };

    // `tokens[id]` in byte-level form; `merges` in rank order, each "LEFT RIGHT". Throws
    // kvs::Error naming `source` when a merge names a token the vocabulary lacks, a merged
    // result is not in it, or a byte has no token.
    ByteBpeTokenizer(std::vector<std::string> tokens, const std::vector<std::string>& merges,
                     Options options, const std::string& source);

    // GPT-2's files: vocab.json (token -> id) and merges.txt ("#version" line, then one merge
    // per line). (core/tokenizers/byte_bpe_files.cpp)
    static ByteBpeTokenizer from_vocab_and_merges(const std::string& vocab_json,
                                                  const std::string& merges_txt);
    // A Hugging Face tokenizer.json with a BPE model; added_tokens join the vocabulary as
    // special tokens. (core/tokenizers/byte_bpe_files.cpp)
    static ByteBpeTokenizer from_hf_json(const std::string& path);
    // The same from the file's text, `path` naming it in messages (the fuzzer's entry).
    static ByteBpeTokenizer from_hf_json_text(std::string_view text, const std::string& path);
    // tokenizer.ggml.model must be "gpt2"; tokens must hold `vocab` entries.
    static ByteBpeTokenizer from_gguf(const GgufFile& f, int vocab);

    int vocab_size() const override { return static_cast<int>(tokens_.size()); }
    std::vector<int> encode(std::string_view text) const override;
    std::string decode(int prev, int token) const override;
    // The bytes the token stands for (a lone part of a UTF-8 character stays a byte).
    std::string piece(int token) const override;
    std::string kind() const override;
    int bos() const override { return add_bos_ ? bos_ : -1; }

    int eos() const { return eos_; }
    int bos_id() const { return bos_; }
    std::size_t merge_count() const { return merge_count_; }
    // The vocabulary entry as stored (byte-level characters), for tests and hover text.
    const std::string& stored(int token) const { return tokens_.at(token); }

  private:
    std::vector<std::string> tokens_;  // byte-level form, as the files store them
    std::vector<std::string> bytes_;   // what each id decodes to
    std::vector<bool> control_;
    std::unordered_map<std::string, int> index_;  // byte-level form -> lowest id
    struct Merge {
        int id, rank;
    };
    std::unordered_map<std::uint64_t, Merge> merges_;  // (left << 32 | right) -> result
    std::array<int, 256> byte_ids_{};
    std::size_t merge_count_ = 0;
    ByteBpeSplit split_ = ByteBpeSplit::Gpt2;
    bool ignore_merges_ = false;
    int bos_ = -1, eos_ = -1;
    bool add_bos_ = false;
};

}  // namespace kvs
