#pragma once
// Several prompts generated together (lesson 8, batch size). Step 0 prefills every prompt in one
// forward pass ([sum of prompt lengths, dim] through the dense ops); each later step decodes one
// token for every sequence still running, again in one pass. Each sequence has its own KV cache
// and stops on its own (end token, length limit, context), and then drops out of the batch.
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/session/finish_reason.h"
#include "core/session/sampler.h"
#include "core/session/trace.h"

namespace kvs {

struct BatchStepRecord {
    int index = 0;
    Phase phase = Phase::Prefill;
    int active = 0;  // sequences computed at this step
    int rows = 0;    // rows through the model: prompt tokens at prefill, `active` at decode
    std::vector<int> token_out;  // per sequence, -1 for one that had already finished
    double wall_seconds = 0;     // measured: the forward pass and sampling
    OpTimes op_times;            // measured per op
    StepCounts counts;           // counted from shapes, summed over the sequences
};

class BatchSession {
  public:
    static constexpr int kMaxBatch = 8;
    // Each sequence samples with config.sampler, seeded seed + its index.
    BatchSession(const Model& model, Backend& backend, int max_new_tokens,
                 SamplerConfig sampler = {});

    // 1..kMaxBatch prompts; throws kvs::Error for too many, or one that does not fit.
    void set_prompts(const std::vector<std::string>& prompts);
    const BatchStepRecord& step();  // throws when every sequence has finished
    bool finished() const;
    int size() const { return static_cast<int>(seqs_.size()); }
    const std::vector<BatchStepRecord>& steps() const { return steps_; }
    const std::vector<int>& tokens(int seq) const { return seqs_.at(seq).tokens; }
    FinishReason finish_reason(int seq) const { return seqs_.at(seq).finish; }
    int prompt_len(int seq) const { return seqs_.at(seq).prompt_len; }
    // Sequence `seq`'s KV cache as its slot holds it now (len: the rows written, every token but
    // the last one sampled), and those rows: out [n_layers, 2 (K, V), len, kv_dim]. Read outside
    // any step, so no measured time includes it.
    KvShape kv(int seq) const;
    void read_kv(int seq, std::vector<float>& out);

  private:
    struct Seq {
        std::vector<int> tokens;
        int prompt_len = 0;
        FinishReason finish = FinishReason::None;
        Sampler sampler;
    };
    const Model& model_;
    Backend& backend_;
    std::unique_ptr<BatchRunner> runner_;
    int max_new_;
    SamplerConfig sampler_;
    std::vector<Seq> seqs_;
    std::vector<BatchStepRecord> steps_;
    std::vector<ForwardResult> results_;
};

}  // namespace kvs
