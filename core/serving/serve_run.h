#pragma once
// One serving run from first admission to last retirement, and what it cost: the one place the
// CLI's `serve` summary and the lessons' serve("...") metrics read their numbers from, so both
// print the same figures for the same prompts and options.
#include <functional>
#include <span>
#include <vector>

#include "core/serving/cache_effect.h"
#include "core/serving/scheduler.h"

namespace kvs {

// A request's block table between two steps: entry i names the block holding its rows
// [i * block_size, (i + 1) * block_size); -1 where a window let the block go.
struct TableSnapshot {
    int request = 0;         // id, from 0 in the order submitted
    std::vector<int> table;  // block ids in the pool
    int rows = 0;            // K/V rows it holds
};

struct ServeRun {
    ServeConfig config;  // as the scheduler resolved it (the pool's size, calibrated scales)
    ServeStats stats;
    std::vector<ServeRequest> requests;  // each request's tokens and why it stopped
    std::vector<ServeStep> steps;
    // The step whose block tables the lessons print and the window's Serving view opens on: the
    // one that left the most blocks held, or under a window the one that left the most blocks
    // let go (its tables' dashes); the tables of the requests running after it, and how many
    // steps had run by then.
    int shown_step = -1, shown_steps_run = 0;
    std::vector<TableSnapshot> shown_tables;
    int mixed_steps = 0;       // steps whose one pass held prefill rows and decode rows together
    int chunked_steps = 0;     // steps whose pass held part of a prompt, the rest left for later
    int longest_queue = 0;     // most requests waiting after a step's admissions
    int most_cached_free = 0;  // most free blocks still holding a cached prefix after a step
    // Blocks a contiguous cache per running request would have reserved at the peak, less the
    // peak blocks the paged cache held.
    double blocks_saved() const { return stats.contiguous_blocks() - stats.peak_blocks; }
};

// Where a run is after a step, for a command's progress line: requests finished of all submitted,
// tokens generated so far (preempted requests' tokens counted once).
struct ServeProgress {
    int step = 0;
    int finished = 0, requests = 0;
    long long generated = 0;
};

// Submits `prompts` in order (prompt i arriving at step arrivals[i]; all at step 0 when
// `arrivals` is empty) and steps the scheduler until every request has finished, calling
// `on_step` (when given) after each step. A quantised cache with fixed scales
// (KvScaleMode::Tensor, ChannelK) has them calibrated on the prompts first
// (calibrate_kv_scales). Throws what Scheduler throws (bad options, a prompt that cannot fit, a
// negative arrival).
ServeRun run_serve(const Model& model, Backend& backend, const ServeConfig& config,
                   std::span<const std::vector<int>> prompts, std::span<const int> arrivals = {},
                   const std::function<void(const ServeProgress&)>& on_step = {});

// Each request's prompt served alone, one after the other: a batch of one, the full float32
// cache, no prefix cache, a pool that never runs dry, the same sampler settings (as `generate`).
struct AloneRuns {
    std::vector<std::vector<int>> tokens;  // each request's, in order
    int generated = 0;
    double seconds = 0;  // their steps' summed wall time, measured as the batched run's
    double tokens_per_second() const { return seconds > 0 ? generated / seconds : 0; }
};
AloneRuns serve_alone(const Model& model, Backend& backend, const ServeRun& run);

// How many requests of `run` produced exactly the tokens of their prompt served alone. For a
// windowed or quantised run: the texts the bounded or smaller cache left as they are.
int requests_same_as_alone(const Model& model, Backend& backend, const ServeRun& run);

// A bounded run's window and sinks against the full cache on every request's tokens (teacher-
// forced, window_effect): passes and agreements summed, the largest logit difference kept.
// Zero passes when the run had no window.
CacheEffect serve_window_effect(const Model& model, Backend& backend, const ServeRun& run);

// A quantised run's cache against float32 on every request's tokens (cache_type_effect, with the
// run's scales), summed the same way. Zero passes for a float32 run.
CacheEffect serve_cache_type_effect(const Model& model, Backend& backend, const ServeRun& run);

// StreamingLLM's experiment on a bounded run (stream_effect): the requests' texts as the full
// cache writes them alone (`alone`, serve_alone's), joined into one text that may run past the
// model's context, teacher-forced through the run's window and sinks. Empty without a window.
StreamEffect serve_stream_effect(const Model& model, Backend& backend, const ServeRun& run,
                                 std::span<const std::vector<int>> alone);

}  // namespace kvs
