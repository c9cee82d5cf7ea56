#pragma once
// The stepper the lessons talk about. A Session holds a prompt, a cache mode and a position;
// each step() does one thing and appends one StepRecord to the trace:
//   step 0, prefill: every prompt token in one forward pass (causal mask), K/V of each written
//           to the cache, first new token chosen;
//   step k, decode:  the last chosen token in; cached: one query row against the cache;
//           uncached: the whole sequence recomputed from scratch (same logits, more work).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/session/finish_reason.h"
#include "core/session/sampler.h"
#include "core/session/step_timing.h"
#include "core/session/trace.h"

namespace kvs {

struct SessionConfig {
    CacheMode mode = CacheMode::Cached;
    // Bidirectional: every pass without the causal mask (core/trace.h). Its K/V rows change as
    // tokens are appended, so no cache of them can be reused: such a session runs uncached, keeps
    // every row of each step's attention and measures, per layer, how far each earlier row moved.
    AttentionMask mask = AttentionMask::Causal;
    SamplerConfig sampler;
    int max_new_tokens = -1;  // -1: until the context is full
    Capture capture;          // what each step keeps for the views
    // An uncached decode step keeps every query row it computed (attention weights, q and the
    // attention output of each), not only the newest: every row its why-not-Q count names can
    // then be opened (the window, `kvscope-cli explain`, the lessons). Off, it keeps the newest,
    // as a cached step does (a long uncached generation's trace stays linear in its length).
    bool keep_every_query_row = false;
    bool keep_logits = true;
    int top_k_record = 10;
    // Tokens each step's sampling stages show (StepRecord::sampling), besides the drawn one.
    int sampling_entries = 16;
    bool prefill_token_by_token = false;  // feed the prompt one token per forward pass
    bool stop_at_end_token = true;  // false: generate on past the end token, to the context limit
    std::size_t trace_budget = Trace::kDefaultBudget;
    // Each short step is run timing.runs times from the same state and timed by the median.
    TimingPolicy timing;
};

class Session {
  public:
    Session(const Model& model, Backend& backend, SessionConfig config = {});

    // Throws kvs::Error when the prompt does not fit the context (or is empty for a model
    // without BOS), or when prompt + max_new_tokens would not fit.
    void set_prompt(std::string_view text);
    void set_prompt_tokens(std::vector<int> ids);

    const StepRecord& step();  // throws kvs::Error when finished
    bool finished() const { return finish_reason_ != FinishReason::None; }
    FinishReason finish_reason() const { return finish_reason_; }
    bool prefilled() const { return !trace_.empty(); }
    // Back to the prompt: cache emptied, trace cleared, sampler reseeded.
    void reset();
    // Cached or uncached from the next step on (the cache holds every row in both modes); a
    // bidirectional session stays uncached.
    void set_mode(CacheMode m) {
        config_.mode = config_.mask == AttentionMask::Bidirectional ? CacheMode::Uncached : m;
    }
    // The next step's token is `token` instead of the sampler's choice (a session shown beside
    // another follows its tokens, so both attend over the same sequence).
    void force_next(int token) { forced_next_ = token; }
    void set_sampler(const SamplerConfig& s);
    // How steps are timed from the next step on (core/session/step_timing.h).
    void set_timing(const TimingPolicy& t) { config_.timing = t; }
    // Capture::time_each_op from the next step on: every op timed (op by op), or the fast path.
    void set_time_each_op(bool on) { config_.capture.time_each_op = on; }
    // Right after the prefill (no decode step yet): its forward work once more from an empty
    // cache, which leaves the cache as the prefill did; its seconds. For timing two sessions'
    // equal prefills in turn (Workbench::step, core/session/step_timing.h's time_in_turn).
    double rerun_prefill();
    // The prefill's time from runs taken in turn with a twin's (StepRecord::timed_in_turn).
    void retime_prefill(const StepTiming& t);

    const Trace& trace() const { return trace_; }
    Trace& trace() { return trace_; }
    const Model& model() const { return model_; }
    const SessionConfig& config() const { return config_; }
    Runner& runner() { return *runner_; }
    int prompt_len() const { return prompt_len_; }
    // Prompt (BOS first when the model has one) and every token chosen so far.
    const std::vector<int>& tokens() const { return tokens_; }
    int generated() const { return static_cast<int>(tokens_.size()) - prompt_len_; }
    // The text as llama2.c prints it: prompt and generated pieces, the stop token omitted.
    std::string text(bool printable_only = false) const;
    // The largest max_new_tokens the context allows for the current prompt.
    int max_new_tokens_allowed() const;

  private:
    // The rows the cache holds before a step (the ones an uncached decode recomputes); on: held
    // has them, [n_layers, 2 (K, V), rows, kv_dim], to compare with their recomputation.
    struct KvCheck {
        bool on = false;
        int rows = 0;
        std::vector<float> held;
    };
    struct TimedRun {
        std::chrono::steady_clock::time_point t0;
        std::uint64_t kernels0 = 0;
    };
    // The two things a step does, the concept as the lessons tell it.
    void prefill(StepRecord& r, const Capture& want);
    void decode(StepRecord& r, Capture& want, const KvCheck& check);
    void count_rows(StepRecord& r) const;
    // What a step needs around them: the checks, its record, its time, the token it chooses.
    void check_can_step() const;
    StepRecord new_record() const;
    KvCheck hold_cached_rows(const Capture& want);
    TimedRun start_timed_run(const Capture& want);
    // The first run's time and counters, the re-runs' median (core/session/step_timing.h), and
    // after a cached decode step timed op by op, the fast paths measured beside it.
    void time_forward(StepRecord& r, const Capture& want, const TimedRun& run);
    Draw choose_token(StepRecord& r);
    // How far each layer's recomputed K/V rows are from the held ones; the trace then keeps the
    // new row only (causal), as a cached step would.
    void compare_recomputed_rows(StepRecord& r, const KvCheck& check);
    void check_fits() const;
    void finish_step(StepRecord& r, const ForwardResult& fr);
    // The cached decode step `r` again through a fast path (the fused kernels, or the op-by-op
    // kernels as one graph): its median time and one run's kernel launches.
    void time_fast_path(const StepRecord& r, const Capture& want, bool fused, double& seconds,
                        int& kernels);

    const Model& model_;
    std::unique_ptr<Runner> runner_;
    SessionConfig config_;
    Sampler sampler_;
    Trace trace_;
    std::vector<int> tokens_;
    int prompt_len_ = 0;
    FinishReason finish_reason_ = FinishReason::None;
    ForwardResult fr_;     // reused between steps
    ForwardResult rerun_;  // what timing re-runs compute (the same as fr_), discarded
    int forced_next_ = -1;
};

}  // namespace kvs
