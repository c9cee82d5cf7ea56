#pragma once
// A SentencePiece-style tokenizer (llama's vocabulary: pieces with scores, '▁' for a space,
// "<0xNN>" byte fallback) read from a GGUF file's tokenizer.ggml.* metadata or from a
// SentencePiece tokenizer.model (core/tokenizers/spm_model_file.h, through libsentencepiece). It
// encodes and decodes as llama2.c's run.c does (core/tokenizers/llama_vocab_rules.h), with the ids
// of BOS, EOS, <unk> and the byte pieces taken from the file instead of llama2.c's fixed 1, 2, 0
// and 3 + byte.
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tokenizers/tokenizer.h"

namespace kvs {

class GgufFile;

// A SentencePiece vocabulary as a file holds it, before it is checked.
struct SpmVocab {
    std::vector<std::string> tokens;  // as stored: '▁' for a space
    std::vector<float> scores;        // one per token (merge priority: higher merges first)
    std::vector<int> types;           // SpmTokenizer::PieceType values; empty: guessed
    int bos = -1, eos = -1, unk = 0;  // ids, -1: none
    bool add_bos = true, add_space_prefix = true;
    std::string source;  // where it was read, in words ("GGUF metadata", "tokenizer.model")
};

class SpmTokenizer final : public Tokenizer {
  public:
    // SentencePiece's piece types, as GGUF's tokenizer.ggml.token_type stores them.
    enum class PieceType : std::uint8_t {
        Normal = 1,
        Unknown = 2,
        Control = 3,
        UserDefined = 4,
        Unused = 5,
        Byte = 6,
    };

    // tokenizer.ggml.model must be "llama"; tokens (and scores, token_type when present) must
    // hold `vocab` entries. Throws kvs::Error naming the file otherwise.
    static SpmTokenizer from_gguf(const GgufFile& f, int vocab);
    // Any source's vocabulary; `where` prefixes each message ("m.gguf: GGUF tokenizer: ").
    static SpmTokenizer from_vocab(SpmVocab v, const std::string& where);

    int vocab_size() const override { return static_cast<int>(pieces_.size()); }
    std::vector<int> encode(std::string_view text) const override;
    std::string decode(int prev, int token) const override;
    std::string printable(int prev, int token) const override;
    // The vocabulary entry with '▁' shown as the space it stands for (as llama2.c's files hold it).
    std::string piece(int token) const override;
    int bos() const override { return add_bos_ ? bos_ : -1; }
    std::string kind() const override;

    int eos() const { return eos_; }
    int bos_id() const { return bos_; }  // even when the model does not add it to prompts
    PieceType type(int token) const { return types_.at(token); }
    float score(int token) const { return scores_.at(token); }

  private:
    int find(const std::string& text) const;  // a Normal/UserDefined/Unused piece, or -1

    std::vector<std::string> pieces_;  // '▁' already turned into ' '
    std::vector<float> scores_;
    std::vector<PieceType> types_;
    std::unordered_map<std::string, int> index_;  // text -> lowest id (byte and control excluded)
    std::array<int, 256> byte_ids_{};             // id of "<0xNN>", -1 when the vocab lacks it
    int bos_ = -1, eos_ = -1, unk_ = 0;
    bool add_bos_ = true, add_space_prefix_ = true;
    std::string source_;
};

}  // namespace kvs
