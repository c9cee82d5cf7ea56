#pragma once
// A SentencePiece tokenizer.model (Llama 2's and TinyLlama's: a BPE model with byte fallback and
// no normalization) read through Debian's libsentencepiece: its pieces, scores, types and
// special ids become an SpmTokenizer (core/tokenizers/spm_tokenizer.h), which encodes as run.c
// does; a test checks that against libsentencepiece's own Encode. Built where libsentencepiece is
// (KVSCOPE_HAVE_SENTENCEPIECE); elsewhere (the web page) reading one is refused in one line.
#include <string>

#include "core/tokenizers/spm_tokenizer.h"

namespace kvs {

// Whether this build reads tokenizer.model files.
bool reads_sentencepiece_models();

// Throws kvs::Error naming `path` when it is not a SentencePiece model, holds other than `vocab`
// pieces, or is of a kind SpmTokenizer does not encode as SentencePiece would: a Unigram model,
// a normalization rule other than identity, extra whitespace removed.
SpmTokenizer spm_tokenizer_from_model_file(const std::string& path, int vocab);

}  // namespace kvs
