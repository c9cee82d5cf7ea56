#pragma once
// The tutorials' toy example as a Model, so every view shows it like a real one.
//
// Each token carries one scalar (its value in core/tokenizers/toy_vocabulary.h). One layer, four
// heads with hand-made rules instead of learned Q/K: (0) "even": keys at even positions, (1)
// "last": the query's own token, (2) "first": the first token, (3) "all": every key. The K/V cache
// holds one row per token shared by all four heads (the tutorial's single cache): K = the token's
// position (1-based), V = its value; so n_kv_heads = 1, head_dim = 1, and dim = 4 (one scalar per
// head). A head's score for a (query, key) pair is 0 when its rule selects the key and -inf when it
// does not; the causal mask sets later keys to -inf; softmax turns the scores into weights (equal
// weights over the selected keys) and the head's output is the weighted sum of the values. A row
// whose keys are all -inf ("even" at position 1) has no output: "none" (NaN in head_outputs,
// AttentionRows::empty_row set, weights 0), and it contributes 0 to the logits.
// Logits over the vocabulary = projection (toy_vocabulary.h) . context, context: [4] = the four
// head outputs at the last position. Generation stops at ".", or when the context is full.
// Everything is computed on the host, in core: the runner has no Backend.
#include <memory>

#include "core/model/model.h"
#include "core/tokenizers/toy_tokenizer.h"
#include "core/tokenizers/toy_vocabulary.h"

namespace kvs {

enum class ToyHead { Even = 0, Last = 1, First = 2, All = 3 };
const char* toy_head_name(int head);  // "even", "last", "first", "all"
const char* toy_head_rule(int head);  // "attend to tokens at even positions", ...

class ToyModel final : public Model {
  public:
    static constexpr int kContext = 16;
    ToyModel();
    std::string name() const override { return "toy"; }
    const ModelConfig& config() const override { return config_; }
    const Tokenizer& tokenizer() const override { return tok_; }
    const ToyTokenizer& toy_tokenizer() const { return tok_; }
    // The backend is not used: the toy computes on the host.
    std::unique_ptr<Runner> make_runner(Backend& backend) const override;
    std::vector<int> stop_tokens() const override { return {tok_.id(".")}; }
    // Counted from the toy's own ops: one rule evaluation per (head, query, key) of the score
    // matrix, softmax 5 and weighted sum 2 per causal (head, query, key), the projection 2 x 4 x
    // vocab for the last row; bytes: value table and projection, K/V rows read and written.
    StepCounts count_forward(int pos0, int T) const override;
    bool is_toy() const override { return true; }
    // The value table [vocab] and the projection [vocab, 4].
    std::size_t parameter_count() const override {
        return std::size_t(config_.vocab_size) * (1 + kToyHeads);
    }

  private:
    ModelConfig config_;
    ToyTokenizer tok_;
};

}  // namespace kvs
