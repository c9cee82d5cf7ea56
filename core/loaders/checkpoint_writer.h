#pragma once
// Writers for the llama2.c file formats that core/loaders/checkpoint.h and
// core/tokenizers/bpe_tokenizer.h read: random-weight checkpoints of any shape (for tests and
// figures at sizes we do not commit) and byte-level tokenizers to go with them.
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_config.h"

namespace kvs {

// Writes a llama2.c version-0 checkpoint of shape `c` with weights drawn uniformly from
// [-scale, scale] (scale = 1/sqrt(dim), so activations stay of order 1), RMS gains 1 and
// freq_cis 0, deterministic in `seed`. Streams in pieces (a 1 GB file needs no 1 GB buffer),
// into PATH.tmp renamed to PATH at the end, so a failed write leaves no half file under PATH.
// Throws kvs::Error naming `path` when `c` is not a valid model or the write fails.
void write_random_checkpoint(const std::string& path, const ModelConfig& c, std::uint64_t seed);

// What the two llama2.c files are as outputs: neither has a header of kvscope's to know an
// earlier one by, so each replaces only an empty file (core/util/output_file.h).
struct OutputKind;
OutputKind checkpoint_output();
OutputKind tokenizer_bin_output();

// A GPT-2-shaped model's weights (ModelConfig::gpt2(); no llama2.c file holds one, so they are
// returned for a GGUF or Hugging Face writer): matrices and embeddings as above, LayerNorm gains 1
// and biases 0, in point_llama_weights's order. Throws kvs::Error when `c` is not valid.
std::vector<float> random_gpt2_weights(const ModelConfig& c, std::uint64_t seed);

// Bytes of a llama2.c tokenizer of exactly `vocab` entries (vocab >= 3): <unk>, <s>, </s>, the
// 256 "<0xXX>" byte pieces as far as they fit, then `pieces` (earlier ones score higher, so they
// merge first), then
// "<padN>" fillers that never merge.
std::vector<unsigned char> tokenizer_file_bytes(const std::vector<std::string>& pieces, int vocab);

// The bytes of a loaded tokenizer.bin again (the Hugging Face export puts one in its folder).
class BpeTokenizer;
std::vector<unsigned char> tokenizer_file_bytes(const BpeTokenizer& tok);

}  // namespace kvs
