#pragma once
// The tokenizer a GGUF file names in tokenizer.ggml.model: "llama" (SentencePiece-style,
// core/tokenizers/spm_tokenizer.h) or "gpt2" (byte-level BPE,
// core/tokenizers/byte_bpe_tokenizer.h), and the tokens that end generation (EOS, then BOS, where
// the metadata has them).
#include <memory>
#include <vector>

#include "core/tokenizers/tokenizer.h"

namespace kvs {

class GgufFile;

struct GgufTokenizer {
    std::unique_ptr<Tokenizer> tok;
    std::vector<int> stop;
};

// Throws kvs::Error naming the file for another tokenizer model or a vocabulary that does not
// hold `vocab` tokens.
GgufTokenizer tokenizer_from_gguf(const GgufFile& f, int vocab);

}  // namespace kvs
