#pragma once
// Continuous batching over a paged KV cache, scheduled as vLLM's (v1) scheduler does. Each step
// is one forward pass; its rows are chosen, within a budget of tokens per step, first for the
// running requests (each its next rows: a decode row, or its prompt's next chunk), oldest first,
// then for waiting requests admitted in arrival order while a batch place, the budget and the
// blocks for their first rows allow (taken at admission). A request whose prompt begins with
// blocks in the prefix cache (BlockCache: kept after their requests retire, found by the hash
// of their tokens) holds those and computes the rest. A full block is remembered in the cache
// when the pass that fills it is scheduled, so a request admitted in the same step finds it
// (its owner writes its rows before anyone reads them: the runner stores every sequence's new
// rows of a layer before any attention of that layer). When the pool runs dry for a running
// request, the request admitted last is preempted: its blocks go back (still cached), it waits
// at the front of the queue to be computed again from its tokens (the same rows, so the same
// text), and nobody is admitted in that step. A request that finishes leaves at once.
#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/model/kv_blocks.h"
#include "core/model/model.h"
#include "core/serving/block_cache.h"
#include "core/serving/serve_stats.h"
#include "core/session/finish_reason.h"
#include "core/session/sampler.h"

namespace kvs {

struct ServeConfig {
    int block_size = 16;   // rows per block
    int pool_blocks = 0;   // blocks in the pool; 0: max_num_seqs contexts' worth
    int max_num_seqs = 8;  // requests running at once (1..64), vLLM's --max-num-seqs
    // Rows a step's pass may hold, prefill chunks and decode rows together (vLLM's
    // --max-num-batched-tokens): a prompt longer than what is left is computed in chunks over
    // several steps. 0: no budget (every prompt in one pass).
    int max_num_batched_tokens = 0;
    bool prefix_caching = true;
    int max_new_tokens = 256;  // per request, within the context (past it under a window)
    // A bounded cache (BatchRunner::set_window): each pass sees the first `sinks` and the last
    // `window` cached rows; the blocks wholly between them are let go. 0: the full cache. No
    // prefix caching under a window (a row depends on what its pass saw), and a prompt is not
    // chunked.
    int window = 0;
    int sinks = 0;
    SinkPositions sink_positions = SinkPositions::Cache;
    // How the pool stores K/V rows: float32, or int8 / fp8-e4m3 with scales (core/model/
    // kv_quant.h; kept and converted in host memory on every backend).
    KvCacheType cache_type = KvCacheType::F32;
    KvScaleMode scale_mode = KvScaleMode::Token;
    // Calibrated scales for KvScaleMode::Tensor and ChannelK (kv_calibration.h), set before the
    // run.
    KvScales scales;
    SamplerConfig sampler;  // every request samples with it, from its own state
};

struct ServeRequest {
    int id = 0;
    std::vector<int> tokens;  // the prompt, then each token generated
    int prompt_len = 0;
    std::vector<int> table;  // its block table (empty while it waits)
    int len = 0;             // K/V rows computed into its blocks
    int slot = -1;           // its place in the runner while running
    FinishReason finish = FinishReason::None;
    Sampler sampler;
    int cached_rows = 0;   // rows found in the prefix cache at its first admission
    int preempted = 0;     // times its blocks were taken back (computed again later)
    int waited_steps = 0;  // steps it spent in the queue
    int arrival = 0;       // the step at which it joins the queue
    int generated() const { return static_cast<int>(tokens.size()) - prompt_len; }
};

// Why requests still wait after a step's admissions: every place taken (max_num_seqs), the
// budget spent, too few free blocks for the first in line, or a step that preempted.
enum class WaitReason { Places, Budget, Blocks, Preemption };
constexpr int kWaitReasons = 4;
// "places", "budget", "blocks", "preemption"
const char* wait_reason_name(WaitReason r);

// One request's rows in a step's pass: positions [first, first + rows). Prefill: prompt rows, or
// a preempted request's tokens computed again; decode: the one row that samples its next token.
struct ServeChunk {
    int request = 0;
    int first = 0, rows = 0;
    bool prefill = true;
};

// One step: the requests that arrived and joined, the rows computed (prefill chunks and decode
// rows in one forward pass), the requests that finished or were preempted. A step at which
// nothing has arrived and nothing runs is skipped: its index is then missing from steps().
struct ServeStep {
    int index = 0;  // the step's number, the clock arrivals are given in
    std::vector<int> arrived, admitted, retired, preempted;
    std::vector<ServeChunk> chunks;              // the pass's rows, request by request
    int queued = 0;                              // requests still waiting after admission
    WaitReason waited_for = WaitReason::Places;  // why, when queued > 0
    int prefill_rows = 0, decode_rows = 0;
    int partial_prompts = 0;      // prompts this pass computed part of (the budget left the rest)
    int cached_blocks_found = 0;  // blocks admitted requests found in the prefix cache
    int used_blocks = 0;          // held after the step
    int cached_free_blocks = 0;   // free after the step, still holding a cached prefix block
    double wall_seconds = 0;      // measured: the whole step, scheduling, pass and sampling
};

class Scheduler {
  public:
    // Throws kvs::Error for a block size of 0 or beyond the context, max_num_seqs, a pool size
    // or a token budget out of range, or a window the pool cannot hold.
    Scheduler(const Model& model, Backend& backend, ServeConfig config);
    // Queues a request, to join the queue at step `arrival` (0: the first); its id (0, 1, ...).
    // Requests arriving at one step queue in the order submitted. Throws for an empty prompt, one
    // longer than the context, one whose prompt and new tokens need more blocks than the pool
    // has, a prompt a window would have to chunk beyond the budget, or a negative arrival.
    int submit(std::vector<int> prompt, int arrival = 0);
    bool finished() const;
    const ServeStep& step();  // throws when every request has finished
    const std::vector<ServeRequest>& requests() const { return reqs_; }
    const std::vector<ServeStep>& steps() const { return steps_; }
    const ServeStats& stats() const { return stats_; }
    const BlockCache& blocks() const { return cache_; }
    const ServeConfig& config() const { return cfg_; }

  private:
    // The rows `r` would compute in this step's pass with `budget` rows left (0: none fit).
    int rows_wanted(const ServeRequest& r, int budget) const;
    // Blocks for r's rows [len, len + rows), taken from the pool, the full ones remembered in
    // the prefix cache; false (nothing taken) when too few are free.
    bool allocate(ServeRequest& r, int rows);
    void schedule_running(ServeStep& st, std::vector<ServeChunk>& pass, int& budget);
    void admit(ServeStep& st, std::vector<ServeChunk>& pass, int& budget);
    // Under a window: the blocks of `r` no later pass reads, back to the pool (-1 in its table).
    void let_go_outside_window(ServeRequest& r);
    void release(ServeRequest& r);
    void preempt(int id, ServeStep& st);
    int context_limit() const;  // positions a request may reach (past the context under a window)

    const Model& model_;
    Backend& backend_;
    ServeConfig cfg_;
    std::unique_ptr<KvBlockPool> pool_;
    BlockCache cache_;
    std::unique_ptr<BatchRunner> runner_;
    std::vector<ServeRequest> reqs_;
    std::vector<int> arriving_;  // ids not yet arrived, in the order submitted
    std::vector<int> waiting_;   // ids, first in line first
    std::vector<int> running_;   // ids, in the order they were admitted
    std::vector<bool> slot_used_;
    std::vector<ServeStep> steps_;
    int clock_ = 0;  // the next step's index (steps with nothing to run are skipped)
    std::vector<ForwardResult> results_;
    ServeStats stats_;
};

}  // namespace kvs
