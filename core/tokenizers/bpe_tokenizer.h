#pragma once
// The llama2.c tokenizer.bin format and run.c's encode/decode rules:
// file = int32 max_token_length, then per token: float32 score, int32 length, bytes.
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tokenizers/tokenizer.h"

namespace kvs {

class BpeTokenizer final : public Tokenizer {
  public:
    static constexpr int kBos = 1;
    static constexpr int kEos = 2;
    static constexpr int kByteBase = 3;  // "<0xXX>" pieces sit at id byte + 3

    // `expected_vocab` is the model's vocab size; -1 reads entries until the end of the file.
    // Throws kvs::Error naming `path` when the file is not a tokenizer of that size.
    static BpeTokenizer load(const std::string& path, int expected_vocab);
    static BpeTokenizer parse(const unsigned char* data, std::size_t size, int expected_vocab,
                              const std::string& name);

    int vocab_size() const override { return static_cast<int>(pieces_.size()); }
    std::vector<int> encode(std::string_view text) const override;
    std::string decode(int prev, int token) const override;
    std::string printable(int prev, int token) const override;
    std::string piece(int token) const override;
    int bos() const override { return kBos; }
    std::string kind() const override {
        return "llama2.c tokenizer.bin (score-ordered merges, byte fallback)";
    }

    float score(int token) const { return scores_.at(token); }
    int find(std::string_view piece) const;  // -1 when absent
    int max_token_length() const { return max_token_length_; }

  private:
    std::vector<std::string> pieces_;
    std::vector<float> scores_;
    std::unordered_map<std::string, int> index_;  // piece -> lowest id holding it
    int max_token_length_ = 0;
};

}  // namespace kvs
