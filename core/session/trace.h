#pragma once
// The record of a session: one StepRecord per step(). Views (GUI panels, the CLI, JSON, tests)
// only ever read this. Heavy payloads (logits, attention, K/V rows) count against a memory
// budget; past it, the oldest steps lose their payloads and keep their scalars.
#include <cstddef>
#include <string>
#include <vector>

#include "core/model/attention_mask.h"
#include "core/model/attention_rows.h"
#include "core/model/backend.h"
#include "core/model/counts.h"
#include "core/model/kv_cache.h"
#include "core/model/model.h"
#include "core/model/op_log.h"
#include "core/session/sampling_stages.h"

namespace kvs {

enum class Phase { Prefill, Decode };
enum class CacheMode { Cached, Uncached };
const char* phase_name(Phase p);
const char* mode_name(CacheMode m);

struct TopToken {
    int id = 0;
    float prob = 0;  // softmax of the logits at temperature 1
    float logit = 0;
};

struct StepRecord {
    int index = 0;  // 0 is the prefill
    Phase phase = Phase::Prefill;
    CacheMode mode = CacheMode::Cached;
    AttentionMask mask = AttentionMask::Causal;
    // Tokens that joined the sequence at this step: the prompt at prefill, one token at decode.
    std::vector<int> new_tokens;
    int pos0 = 0;               // position of the first token the forward pass processed
    int tokens_processed = 0;   // rows through the model: prompt, 1 (cached) or all (uncached)
    int forward_calls = 0;      // 1, or one per prompt token for token-by-token prefill
    int token_out = 0;          // the token chosen
    float coin = -1.0f;         // the random draw when sampling, -1 when greedy
    std::vector<TopToken> top;  // most likely next tokens, best first
    // The distribution the draw indexed, stage by stage (core/session/sampling_stages.h): the
    // sampler's settings at this step, its most likely tokens at each stage and the drawn one.
    SamplingStages sampling;

    // Payloads, dropped from old steps past the trace's budget (payload_evicted).
    std::vector<float> logits;  // [vocab]
    AttentionRows attention;    // rows computed at this step (uncached decode: the new row)
    int kv_rows_kept = 0;
    std::vector<float> kv_rows;       // [n_layers, 2, kv_rows_kept, kv_dim]
    std::vector<float> head_outputs;  // toy model: [n_layers, n_heads, rows]
    // The kept rows' q after RoPE and attention output before wo
    // (core/session/attention_explain.h): [n_layers, attention.rows, n_heads * head_dim]; empty for
    // the toy, whose heads have no q.
    std::vector<float> q_rows;
    std::vector<float> attn_out;
    // Where the kept rows' q, k and v came from (core/model/projection_rows.h): each layer's input,
    // the norm's output, q and k before RoPE, v, k after RoPE: [n_layers, attention.rows, 3 dim +
    // 3 kv_dim]; empty for the toy, and for a step through the fused decode kernels.
    std::vector<float> projections;
    // Every op of the step's forward passes in order, then sampling (core/model/op_log.h); empty
    // for the toy, whose rule-based heads are not these ops.
    OpLog ops;
    bool payload_evicted = false;

    // Why K and V are cached and Q is not, counted and measured at this step (kept when the
    // payload is dropped).
    int query_rows_computed = 0;  // rows of Q the forward passes computed
    int query_rows_used = 0;      // rows whose attention a cached run needs: prompt, then 1
    int kv_rows_written = 0;      // K/V rows the step wrote to the cache
    int kv_rows_recomputed = 0;   // of those, rows the cache already held (uncached decode)
    // Largest |recomputed - held| over those rows, measured by comparing them with the rows the
    // cache held before the step emptied it; -1 when nothing was recomputed or compared.
    double kv_recomputed_max_delta = -1;
    // The same comparison per layer, K and V apart: [n_layers] each, empty when not compared.
    // Causal: 0 in every layer (a cache of them is exact). Bidirectional: 0 in layer 0, whose K/V
    // come from the token's embedding alone, and above 0 from layer 1 on, where each row mixes
    // in every token's attention output, the new one's included.
    std::vector<double> kv_delta_k, kv_delta_v;

    KvShape kv;  // the cache after the step
    // Measured. The forward passes of a short step are run timing_runs times from the same state
    // (core/session/step_timing.h): forward_seconds is the median run, min/max the spread.
    double wall_seconds = 0;         // the median forward time plus sampling
    double forward_seconds = 0;      // forward passes only: the median of timing_runs runs
    double forward_min_seconds = 0;  // the fastest run
    double forward_max_seconds = 0;  // the slowest run
    int timing_runs = 1;
    // Compare mode's prefill: timed in turn with the twin's, the same work (step_timing.h's
    // time_in_turn), so neither is favoured by the order of measuring.
    bool timed_in_turn = false;
    // How the step's forward passes ran their kernels (core/model/model.h's PassPath): op by op,
    // each op timed (the op strip recorded), or a fast path: the fused decode kernels
    // (core/model/fused_ops.h), or the op-by-op kernels as one CUDA graph.
    PassPath path = PassPath::PerOp;
    int kernel_launches = 0;  // kernels the backend launched for one run of the step (0: CPU)
    OpTiming op_timing = OpTiming::HostClock;  // how the backend timed the ops
    // A cached decode step on a backend with CUDA Graphs (core/model/step_graphs.h) or fused
    // kernels: the same step the fast ways, each the median of timing_runs runs, and its kernel
    // launches (0: not measured). A step that ran op by op measures both after its per-op runs; a
    // step that ran a fast way has that way's figures equal to forward_seconds and
    // kernel_launches.
    double graph_seconds = 0;
    int graph_kernel_launches = 0;
    double fused_seconds = 0;
    int fused_kernel_launches = 0;
    OpTimes op_times;     // measured per op by the backend
    std::string backend;  // "cpu", "cuda", ...
    std::string device;   // what measured the times
    StepCounts counts;    // counted from shapes

    std::size_t payload_bytes() const;
    void drop_payload();
};

class Trace {
  public:
    static constexpr std::size_t kDefaultBudget = std::size_t(256) << 20;
    explicit Trace(std::size_t budget_bytes = kDefaultBudget) : budget_(budget_bytes) {}

    void push(StepRecord&& r);
    void clear();
    // Room for n steps (at most kReserveSteps) in one allocation, so the records are not moved
    // to fresh memory each time the list doubles: fresh pages are what a decode step of a small
    // model waits on (14-20 us each on this guest; docs/bench/page_fault.cpp).
    static constexpr std::size_t kReserveSteps = 4096;
    void reserve(std::size_t n);
    const std::vector<StepRecord>& steps() const { return steps_; }
    bool empty() const { return steps_.empty(); }
    const StepRecord& back() const { return steps_.back(); }
    // The newest step, for its times only (taken again after it was pushed: a twin's equal step
    // timed in turn); its payload stays as counted.
    StepRecord& back_for_timing() { return steps_.back(); }
    std::size_t payload_bytes() const { return payload_bytes_; }
    std::size_t budget() const { return budget_; }
    void set_budget(std::size_t b);
    int evicted_steps() const { return evicted_; }

  private:
    void enforce_budget();
    std::vector<StepRecord> steps_;
    std::size_t budget_;
    std::size_t payload_bytes_ = 0;
    int evicted_ = 0;
    std::size_t next_victim_ = 1;  // the prefill (step 0) is dropped last
};

}  // namespace kvs
