#include "lessonlib/lesson_serve.h"

#include "core/model/model.h"
#include "core/util/error.h"

namespace kvs {

ServeConfig serve_config(const ServePlan& plan) {
    ServeConfig c;
    c.block_size = plan.block_size;
    c.pool_blocks = plan.pool_blocks;
    c.batch_limit = plan.batch_limit;
    c.prefix_sharing = plan.prefix_sharing;
    c.max_new_tokens = plan.new_tokens;
    c.window = plan.window;
    c.sinks = plan.sinks;
    c.cache_type = kv_cache_type_named(plan.cache).value_or(KvCacheType::F32);
    return c;
}

LessonServe run_lesson_serve(const Model& model, Backend& backend, const ServePlan& plan) {
    const ServeConfig c = serve_config(plan);
    std::vector<std::vector<int>> prompts;
    for (const std::string& p : plan.prompts) prompts.push_back(model.tokenizer().encode(p));
    LessonServe s;
    s.plan = plan;
    s.device = backend.device();
    s.run = run_serve(model, backend, c, prompts);
    s.same_as_alone = requests_same_as_alone(model, backend, s.run);
    s.window = serve_window_effect(model, backend, s.run);
    s.cache = serve_cache_type_effect(model, backend, s.run);
    s.f32_row_bytes = double(model.config().kv_bytes_per_token());
    return s;
}

int serve_block(const LessonServe& s, int request, int position) {
    const int bs = s.run.stats.block_size;
    for (const TableSnapshot& t : s.run.fullest_tables) {
        if (t.request != request - 1) continue;
        if (position < 1 || position > t.rows)
            throw Error("request " + std::to_string(request) + " holds positions 1 to " +
                        std::to_string(t.rows) + ", not " + std::to_string(position));
        const int block = t.table.at((position - 1) / bs);
        if (block < 0)
            throw Error("the window let go the block of position " + std::to_string(position));
        return block;
    }
    throw Error("request " + std::to_string(request) +
                " was not running when the most blocks were held (its table is not printed)");
}

const std::vector<ServeField>& serve_fields() {
    static const std::vector<ServeField> f = {
        {"requests", "requests served"},
        {"steps", "scheduler steps (forward passes) to serve them all"},
        {"generated", "tokens generated, all requests"},
        {"block_size", "K/V rows per block"},
        {"pool_blocks", "blocks in the pool"},
        {"peak_blocks", "most blocks held at once"},
        {"peak_running", "most requests running at once"},
        {"contiguous_blocks",
         "blocks contiguous caches would reserve: peak running x the context's rows / block size"},
        {"blocks_saved", "contiguous_blocks - peak_blocks"},
        {"context", "rows a contiguous cache reserves per request (the model's context)"},
        {"fragmentation", "slots allocated but unused, % of those allocated, over every step"},
        {"shared_blocks", "full prefix blocks taken from another request"},
        {"partial_blocks", "partly filled prefix blocks taken from another request"},
        {"copies_on_write", "shared, partly filled blocks copied before a write"},
        {"shared_rows", "prompt rows not computed again"},
        {"prompt_rows", "prompt tokens of all requests"},
        {"prefill_rows", "rows computed in prefill passes (a preempted request's again too)"},
        {"preemptions", "times a running request gave its blocks back (computed again later)"},
        {"queued", "requests that waited at least one step"},
        {"mixed_steps", "steps whose one pass held prefill rows and decode rows together"},
        {"same_as_alone", "requests whose tokens equal their prompt served alone"},
        {"fullest_tables", "requests running when the most blocks were held"},
        {"window_passes", "passes compared, bounded cache against the full cache"},
        {"window_same", "of those, passes with the full cache's most likely next token"},
        {"window_max_logit_diff", "max |logit difference| bounded against full cache"},
        {"row_bytes", "bytes of one position's K and V, every layer, in the run's cache type"},
        {"f32_row_bytes", "the same in float32"},
        {"cache_passes", "passes compared, the run's cache type against float32"},
        {"cache_same", "of those, passes with float32's most likely next token"},
        {"cache_max_logit_diff", "max |logit difference| against the float32 cache"},
    };
    return f;
}

double serve_field(const LessonServe& s, const std::string& f) {
    const ServeStats& st = s.run.stats;
    if (f == "requests") return double(s.run.requests.size());
    if (f == "steps") return double(s.run.steps.size());
    if (f == "generated") return st.generated;
    if (f == "block_size") return st.block_size;
    if (f == "pool_blocks") return st.pool_blocks;
    if (f == "peak_blocks") return st.peak_blocks;
    if (f == "peak_running") return st.peak_running;
    if (f == "contiguous_blocks") return st.contiguous_blocks();
    if (f == "blocks_saved") return s.run.blocks_saved();
    if (f == "context") return st.context;
    if (f == "fragmentation") return st.fragmentation_percent();
    if (f == "shared_blocks") return st.shared_full_blocks;
    if (f == "partial_blocks") return st.shared_partial_blocks;
    if (f == "copies_on_write") return st.copies_on_write;
    if (f == "shared_rows") return st.shared_rows;
    if (f == "prompt_rows" || f == "prefill_rows") {
        long long n = 0;
        if (f == "prompt_rows")
            for (const ServeRequest& r : s.run.requests) n += r.prompt_len;
        else
            for (const ServeStep& x : s.run.steps) n += x.prefill_rows;
        return double(n);
    }
    if (f == "preemptions") return st.preemptions;
    if (f == "queued") return st.queued_requests;
    if (f == "mixed_steps") return s.run.mixed_steps;
    if (f == "same_as_alone") return s.same_as_alone;
    if (f == "fullest_tables") return double(s.run.fullest_tables.size());
    if (f == "window_passes") return s.window.passes;
    if (f == "window_same") return s.window.same_next_token;
    if (f == "window_max_logit_diff") return s.window.max_logit_difference;
    if (f == "row_bytes") return double(st.bytes_per_row);
    if (f == "f32_row_bytes") return s.f32_row_bytes;
    if (f == "cache_passes") return s.cache.passes;
    if (f == "cache_same") return s.cache.same_next_token;
    if (f == "cache_max_logit_diff") return s.cache.max_logit_difference;
    throw Error("@serve has no figure \"" + f + "\"");
}

}  // namespace kvs
