#pragma once
// What a Session needs from a tokenizer: text -> ids (with BOS where the model expects one) and
// ids -> text. Implemented by the llama2.c BPE tokenizer and by the toy model's word vocabulary.
#include <string>
#include <string_view>
#include <vector>

namespace kvs {

// The largest vocabulary kvscope reads: every tokenizer reader and ModelConfig::validate hold to
// it (ids from files are checked against the file's own entries first, then against this).
constexpr int kMaxVocabulary = 1 << 20;

class Tokenizer {
  public:
    virtual ~Tokenizer() = default;
    virtual int vocab_size() const = 0;
    // Prompt text to ids, BOS first when the model uses one.
    virtual std::vector<int> encode(std::string_view text) const = 0;
    // The bytes `token` contributes to the text when it follows `prev`.
    virtual std::string decode(int prev, int token) const = 0;
    // What a terminal front end prints for it (llama2.c skips unprintable single bytes).
    virtual std::string printable(int prev, int token) const { return decode(prev, token); }
    // The raw vocabulary entry, for labels and hover text.
    virtual std::string piece(int token) const = 0;
    // What kind of tokenizer this is, in words, for `kvscope-cli info`.
    virtual std::string kind() const = 0;
    // Token id of beginning-of-sequence, or -1 when the model has none.
    virtual int bos() const { return -1; }
};

}  // namespace kvs
