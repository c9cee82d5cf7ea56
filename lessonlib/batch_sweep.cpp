#include "lessonlib/batch_sweep.h"

#include <algorithm>
#include <limits>

#include "core/session/batch_session.h"
#include "core/util/error.h"

namespace kvs {

const BatchRow* BatchTable::find(Phase p, int batch) const {
    for (const auto& r : rows)
        if (r.phase == p && r.batch == batch) return &r;
    return nullptr;
}

BatchTable measure_batches(const Model& model, Backend& backend, const BatchPlan& plan,
                           const std::function<void()>& between_passes) {
    if (plan.prompts.empty()) throw Error("@batch needs at least one prompt");
    BatchTable t;
    t.plan = plan;
    t.device = backend.device();
    BatchSession bs(model, backend, plan.decode_steps + 1);
    for (int B : plan.sizes) {
        std::vector<std::string> prompts;
        for (int i = 0; i < B; ++i) prompts.push_back(plan.prompts[i % plan.prompts.size()]);
        BatchRow pre{B, Phase::Prefill}, dec{B, Phase::Decode};
        pre.seconds_per_step = dec.seconds_per_step = std::numeric_limits<double>::infinity();
        for (int rep = 0; rep < std::max(1, plan.repeats); ++rep) {
            bs.set_prompts(prompts);
            double dec_seconds = 0, dec_rows = 0, dec_flops = 0;
            int dec_steps = 0;
            while (!bs.finished()) {  // max new tokens = decode_steps + 1 ends it
                if (between_passes) between_passes();
                const BatchStepRecord& r = bs.step();
                if (r.phase == Phase::Prefill) {
                    if (r.wall_seconds < pre.seconds_per_step) {
                        pre.seconds_per_step = r.wall_seconds;
                        pre.rows_per_step = r.rows;
                        pre.flops_per_step = r.counts.flops;
                        pre.steps = 1;
                    }
                    continue;
                }
                dec_seconds += r.wall_seconds;
                dec_rows += r.rows;
                dec_flops += r.counts.flops;
                ++dec_steps;
            }
            // A run whose sequences all stopped at once has no decode step to time.
            if (dec_steps > 0 && dec_seconds / dec_steps < dec.seconds_per_step) {
                dec.seconds_per_step = dec_seconds / dec_steps;
                dec.rows_per_step = dec_rows / dec_steps;
                dec.flops_per_step = dec_flops / dec_steps;
                dec.steps = dec_steps;
            }
        }
        if (dec.steps == 0) dec.seconds_per_step = 0;
        t.rows.push_back(pre);
        t.rows.push_back(dec);
    }
    // The caches as the last run left them, one per sequence.
    const std::vector<int>* last = bs.steps().empty() ? nullptr : &bs.steps().back().token_out;
    for (int i = 0; i < bs.size(); ++i) {
        BatchSequence q;
        q.tokens = bs.tokens(i);
        q.prompt_len = bs.prompt_len(i);
        q.finish = bs.finish_reason(i);
        q.in_last_step = last && (*last)[i] >= 0;
        q.kv = bs.kv(i);
        bs.read_kv(i, q.kv_rows);
        t.last_run.push_back(std::move(q));
    }
    return t;
}

}  // namespace kvs
