#pragma once
// The toy model's tokenizer: one token per word of the toy vocabulary
// (core/tokenizers/toy_vocabulary.h). Words are matched without regard to case; a possessive "'s"
// is dropped (the tutorial writes "Today's weather is so"), and a trailing "." is a token of its
// own. No BOS.
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizers/tokenizer.h"

namespace kvs {

class ToyTokenizer final : public Tokenizer {
  public:
    ToyTokenizer();
    int vocab_size() const override { return static_cast<int>(words_.size()); }
    // Throws kvs::Error naming the unknown word and listing the vocabulary.
    std::vector<int> encode(std::string_view text) const override;
    std::string kind() const override { return "the toy model's word vocabulary"; }
    std::string decode(int prev, int token) const override;
    std::string piece(int token) const override;
    int id(std::string_view word) const;  // -1 when the word is not in the vocabulary
    std::string vocabulary_list() const;  // "Today, weather, ..." for messages

  private:
    std::vector<std::string> words_;
};

}  // namespace kvs
