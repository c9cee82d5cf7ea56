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
    ServeConfig config;  // as the scheduler resolved it (the pool's size filled in)
    ServeStats stats;
    std::vector<ServeRequest> requests;  // each request's tokens and why it stopped
    std::vector<ServeStep> steps;
    // The block tables of the requests running after the step that left the most blocks held.
    int fullest_step = -1;
    std::vector<TableSnapshot> fullest_tables;
    int mixed_steps = 0;    // steps whose one pass held prefill rows and decode rows together
    int longest_queue = 0;  // most requests waiting after a step's admissions
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
// `on_step` (when given) after each step. Throws what Scheduler throws (bad options, a prompt that
// cannot fit, a negative arrival).
ServeRun run_serve(const Model& model, Backend& backend, const ServeConfig& config,
                   std::span<const std::vector<int>> prompts, std::span<const int> arrivals = {},
                   const std::function<void(const ServeProgress&)>& on_step = {});

// How many requests of `run` produced exactly the tokens of their prompt served alone: a batch
// of one, the full float32 cache, no shared prefix, a pool that never runs dry, the same sampler
// settings. For a windowed or quantised run: the texts the bounded or smaller cache left as they
// are.
int requests_same_as_alone(const Model& model, Backend& backend, const ServeRun& run);

// A bounded run's window and sinks against the full cache on every request's tokens (teacher-
// forced, window_effect): passes and agreements summed, the largest logit difference kept.
// Zero passes when the run had no window.
CacheEffect serve_window_effect(const Model& model, Backend& backend, const ServeRun& run);

// A quantised run's cache type against float32 on every request's tokens (cache_type_effect),
// summed the same way. Zero passes for a float32 run.
CacheEffect serve_cache_type_effect(const Model& model, Backend& backend, const ServeRun& run);

}  // namespace kvs
