#pragma once
// @serve: a lesson's prompts run to their end by the serving scheduler (core/serving/serve_run.h),
// greedy, on the lesson's model and backend, and what the lesson's serve("...") metrics read:
// the run's cache figures (the same ServeStats the CLI's `serve` summary prints), each request's
// text against its prompt served alone, and a bounded or quantised cache's measured effect.
#include <string>
#include <vector>

#include "core/serving/serve_run.h"
#include "lessonlib/lesson.h"

namespace kvs {

struct LessonServe {
    ServePlan plan;
    ServeRun run;
    int same_as_alone = 0;     // requests whose tokens equal their prompt served alone
    CacheEffect window;        // zero passes without a window
    StreamEffect stream;       // StreamingLLM's comparison; zero tokens without a window
    CacheEffect cache;         // against float32; zero passes for a float32 cache
    double f32_row_bytes = 0;  // one position's K and V, every layer, in float32
    // Counted weight reads: passes over the weights this run made (its steps) against those the
    // same tokens one request at a time make (a pass per token sampled); their ratio is what
    // batching saves in weight traffic.
    long long weight_passes = 0, alone_weight_passes = 0;
    // Measured: generated tokens a second, batched (the run's steps, scheduling included) and
    // one request at a time (the same prompts served alone, one after the other), each the
    // fastest of plan.timing runs taken in turns (the one other programs disturbed least).
    double tokens_per_second = 0, alone_tokens_per_second = 0;
    std::string device;
};

// The scheduler's settings a plan asks for (the run below, and the window's Serving view on a
// lesson's @serve).
ServeConfig serve_config(const ServePlan& plan);

// Throws kvs::Error for options the scheduler refuses (a block size beyond the context, a pool too
// small for one request).
LessonServe run_lesson_serve(const Model& model, Backend& backend, const ServePlan& plan);

// A figure of the run by name (serve_fields() lists them with their meaning); throws kvs::Error
// for an unknown name.
double serve_field(const LessonServe& s, const std::string& field);

// The block that holds position `position` (from 1) of request `request` (from 1, the prompts'
// order) in the block tables printed (ServeRun::shown_tables): entry (position - 1) / block size of
// its table. Throws kvs::Error when the request was not running then, or does not hold that
// position, or the window let the block go.
int serve_block(const LessonServe& s, int request, int position);

struct ServeField {
    const char* name;
    const char* help;
    bool timed = false;  // a measured time, not a count: see is_timed_lesson_metric
};
const std::vector<ServeField>& serve_fields();

}  // namespace kvs
