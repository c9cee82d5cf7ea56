#pragma once
// A llama2.c checkpoint with its tokenizer, and the forward pass over Backend ops.
#include <memory>
#include <string>

#include "core/bpe_tokenizer.h"
#include "core/checkpoint.h"
#include "core/model.h"

namespace kvs {

class LlamaModel final : public Model {
  public:
    LlamaModel(Checkpoint ck, BpeTokenizer tok, std::string name);
    std::string name() const override { return name_; }
    const ModelConfig& config() const override { return ck_.config; }
    const Tokenizer& tokenizer() const override { return tok_; }
    const BpeTokenizer& bpe() const { return tok_; }
    const LlamaWeights& weights() const { return ck_.weights; }
    std::unique_ptr<Runner> make_runner(Backend& backend) const override;
    std::unique_ptr<BatchRunner> make_batch_runner(Backend& backend, int max_batch) const override;
    std::vector<int> stop_tokens() const override { return {BpeTokenizer::kBos}; }
    StepCounts count_forward(int pos0, int T) const override {
        return count_llama_forward(ck_.config, pos0, T);
    }

  private:
    Checkpoint ck_;
    BpeTokenizer tok_;
    std::string name_;
};

}  // namespace kvs
