#pragma once
// Lesson 8: time per step against batch size, measured with BatchSession. For each batch size B
// the first B prompts of the plan (cycled) are prefilled together in one forward pass, then
// decoded together for plan.decode_steps steps; the fastest of plan.repeats runs is kept.
#include <functional>
#include <string>
#include <vector>

#include "core/model/backend.h"
#include "core/model/kv_cache.h"
#include "core/model/model.h"
#include "core/session/finish_reason.h"
#include "core/session/trace.h"
#include "lessonlib/lesson.h"

namespace kvs {

struct BatchRow {
    int batch = 0;
    Phase phase = Phase::Prefill;
    int steps = 0;                // steps measured (prefill: 1)
    double rows_per_step = 0;     // rows through the model per step (prefill: all prompt tokens)
    double seconds_per_step = 0;  // measured, mean over the steps of the fastest run
    double flops_per_step = 0;    // counted
    double rows_per_second() const {
        return seconds_per_step > 0 ? rows_per_step / seconds_per_step : 0;
    }
};

// One sequence of the sweep's last run (its last batch size, last repeat) as the BatchSession
// left it, read from its KV cache slot after the run (outside every timed pass): what lesson 8
// shows side by side. The cache holds every token but the last one sampled.
struct BatchSequence {
    std::vector<int> tokens;  // the prompt, then the tokens generated
    int prompt_len = 0;
    FinishReason finish = FinishReason::None;
    bool in_last_step = false;   // computed at the run's last step (it wrote its last row then)
    KvShape kv;                  // kv.len: the rows written
    std::vector<float> kv_rows;  // [n_layers, 2 (K, V), kv.len, kv_dim]
};

struct BatchTable {
    BatchPlan plan;
    std::string device;                   // what measured the times
    std::vector<BatchRow> rows;           // per size: prefill row, then decode row
    std::vector<BatchSequence> last_run;  // one per sequence of the last run
    const BatchRow* find(Phase p, int batch) const;
};

// Throws kvs::Error when the model has no batched forward pass (the toy) or a prompt does not fit.
// `between_passes` runs before every forward pass: the window's worker throws from it to cancel
// a sweep mid-way (quit, SIGTERM, another lesson).
BatchTable measure_batches(const Model& model, Backend& backend, const BatchPlan& plan,
                           const std::function<void()>& between_passes = {});

}  // namespace kvs
