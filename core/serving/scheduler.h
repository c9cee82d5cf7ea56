#pragma once
// Continuous batching over a paged KV cache, as a server runs many requests at once: a request
// waits in a queue, is admitted when a batch place and the blocks for its prompt are free, has
// its remaining prompt rows (prefill) and then one row a step (decode) computed in the same
// passes as every other running request, and is retired when it stops, its blocks free for the
// next request at once. Requests with a common prompt prefix share the blocks that hold it
// (reference counts; a shared, partly filled block is copied before a holder writes into it), so
// the prefix is computed once. When the pool runs dry mid-run, the request admitted last is
// preempted: its blocks go back, and it waits at the front of the queue to be computed again
// from its tokens (the same rows, so the same text).
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/model/kv_blocks.h"
#include "core/model/model.h"
#include "core/serving/serve_stats.h"
#include "core/session/finish_reason.h"
#include "core/session/sampler.h"

namespace kvs {

struct ServeConfig {
    int block_size = 16;  // rows per block
    int pool_blocks = 0;  // blocks in the pool; 0: batch_limit contexts' worth
    int batch_limit = 8;  // requests running at once (1..64)
    bool prefix_sharing = true;
    int max_new_tokens = 256;  // per request, within the context
    // A bounded cache (BatchRunner::set_window): each pass sees the first `sinks` and the last
    // `window` cached rows; the blocks wholly between them are let go. 0: the full cache. Prefix
    // sharing is off under a window.
    int window = 0;
    int sinks = 0;
    // How the pool stores K/V rows: float32, or int8 / fp8-e4m3 with a scale per row
    // (core/model/kv_quant.h; kept and converted in host memory on every backend).
    KvCacheType cache_type = KvCacheType::F32;
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
    int shared_rows = 0;   // prompt rows found in another request's blocks at its admission
    int preempted = 0;     // times its blocks were taken back (computed again later)
    int waited_steps = 0;  // steps it spent in the queue
    int arrival = 0;       // the step at which it joins the queue
    int generated() const { return static_cast<int>(tokens.size()) - prompt_len; }
};

// One step: the requests that arrived and joined, the rows computed (prefill chunks and decode
// rows in one forward pass), the requests that finished or were preempted. A step at which
// nothing has arrived and nothing runs is skipped: its index is then missing from steps().
struct ServeStep {
    int index = 0;  // the step's number, the clock arrivals are given in
    std::vector<int> arrived, admitted, retired, preempted;
    int queued = 0;  // requests still waiting after admission
    int prefill_rows = 0, decode_rows = 0;
    int used_blocks = 0;      // after this step's blocks were added
    double wall_seconds = 0;  // measured: the forward pass and sampling
};

class Scheduler {
  public:
    // Throws kvs::Error for a block size of 0 or beyond the context, or a batch limit or pool
    // size out of range.
    Scheduler(const Model& model, Backend& backend, ServeConfig config);
    // Queues a request, to join the queue at step `arrival` (0: the first); its id (0, 1, ...).
    // Requests arriving at one step queue in the order submitted. Throws for an empty prompt, one
    // longer than the context, one whose prompt and new tokens need more blocks than the pool
    // has, or a negative arrival.
    int submit(std::vector<int> prompt, int arrival = 0);
    bool finished() const;
    const ServeStep& step();  // throws when every request has finished
    const std::vector<ServeRequest>& requests() const { return reqs_; }
    const std::vector<ServeStep>& steps() const { return steps_; }
    const ServeStats& stats() const { return stats_; }
    const KvBlockPool& pool() const { return *pool_; }
    const ServeConfig& config() const { return cfg_; }

  private:
    // The longest run of `r`'s prompt rows that `other`'s blocks hold computed.
    int shareable_rows(const ServeRequest& r, const ServeRequest& other, bool computed) const;
    void admit(ServeStep& st);
    // Blocks for the rows `r` computes this step (a shared last block copied first); false when
    // the pool has too few free.
    bool reserve(ServeRequest& r);
    // Where this step's pass for `r` ends: every row not yet computed; under a window, the prompt
    // in one pass and then one row a pass, also when a preempted request is computed again (so
    // its rows are the ones first computed).
    int pass_end(const ServeRequest& r) const;
    // Under a window: the blocks of `r` no later pass reads, back to the pool (-1 in its table).
    void let_go_outside_window(ServeRequest& r);
    void release(ServeRequest& r);
    void preempt(int id, ServeStep& st);
    void count_use();

    const Model& model_;
    Backend& backend_;
    ServeConfig cfg_;
    std::unique_ptr<KvBlockPool> pool_;
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
