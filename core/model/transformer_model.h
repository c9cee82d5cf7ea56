#pragma once
// A decoder-only transformer (Llama, Qwen2 or GPT-2: ModelConfig's design; from a llama2.c
// checkpoint, a GGUF file or a Hugging Face folder) with its tokenizer, and the forward pass over
// Backend ops.
#include <memory>
#include <string>
#include <vector>

#include "core/model/llama_weights.h"
#include "core/model/model.h"
#include "core/tokenizers/bpe_tokenizer.h"

namespace kvs {

class TransformerModel final : public Model {
  public:
    // A llama2.c checkpoint with its tokenizer.bin: generation stops at BOS, as run.c's does.
    TransformerModel(Checkpoint ck, BpeTokenizer tok, std::string name);
    // Any tokenizer, the tokens that end generation, and where the weights came from (`format`).
    TransformerModel(Checkpoint ck, std::unique_ptr<const Tokenizer> tok, std::vector<int> stop,
                     std::string name, std::string format);
    std::string name() const override { return name_; }
    const ModelConfig& config() const override { return ck_.config; }
    const Tokenizer& tokenizer() const override { return *tok_; }
    std::string format() const override { return format_; }
    const LlamaWeights& weights() const { return ck_.weights; }
    // The matrices kept compact (a GGUF's own quantised types, or --weights), else empty.
    const CompactWeights& compact() const { return ck_.compact; }
    // The same model (tokenizer, stop tokens, name) with other weights: `ck` in this model's
    // shapes; `format` says what they are.
    std::unique_ptr<TransformerModel> with_weights(Checkpoint ck, std::string format) const;
    std::unique_ptr<Runner> make_runner(Backend& backend) const override;
    std::unique_ptr<BatchRunner> make_batch_runner(Backend& backend, int max_batch) const override;
    std::unique_ptr<BatchRunner> make_paged_runner(Backend& backend, int max_batch,
                                                   const KvBlockPool& pool) const override;
    std::vector<int> stop_tokens() const override { return stop_; }
    // The weights a pass reads as they are kept (compact matrices in their types, the rows of
    // the embedding table the tokens use: weight_bytes_read).
    StepCounts count_forward(int pos0, int T) const override {
        StepCounts s = count_llama_forward(ck_.config, pos0, T);
        s.weight_bytes = double(weight_bytes_read(ck_.config, ck_.compact, T));
        s.bytes = s.weight_bytes + s.kv_read_bytes + s.kv_write_bytes;
        return s;
    }

  private:
    Checkpoint ck_;
    std::shared_ptr<const Tokenizer> tok_;  // shared with with_weights()'s models
    std::vector<int> stop_;
    std::string name_;
    std::string format_;
};

}  // namespace kvs
