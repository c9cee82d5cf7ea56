#include "lessonlib/lesson_serve.h"

#include <algorithm>

#include "core/model/model.h"
#include "core/util/error.h"

namespace kvs {

ServeConfig serve_config(const ServePlan& plan) {
    ServeConfig c;
    c.block_size = plan.block_size;
    c.pool_blocks = plan.pool_blocks;
    c.max_num_seqs = plan.max_num_seqs;
    c.max_num_batched_tokens = plan.budget;
    c.prefix_caching = plan.prefix_caching;
    c.max_new_tokens = plan.new_tokens;
    c.window = plan.window;
    c.sinks = plan.sinks;
    c.sink_positions =
        plan.positions == "original" ? SinkPositions::Original : SinkPositions::Cache;
    c.cache_type = kv_cache_type_named(plan.cache).value_or(KvCacheType::F32);
    c.scale_mode = kv_scale_mode_named(plan.scales).value_or(KvScaleMode::Token);
    return c;
}

LessonServe run_lesson_serve(const Model& model, Backend& backend, const ServePlan& plan) {
    const ServeConfig c = serve_config(plan);
    std::vector<std::vector<int>> prompts;
    for (const std::string& p : plan.prompts) prompts.push_back(model.tokenizer().encode(p));
    LessonServe s;
    s.plan = plan;
    s.device = backend.device();
    s.run = run_serve(model, backend, c, prompts, plan.arrivals);
    const AloneRuns alone = serve_alone(model, backend, s.run);
    for (std::size_t i = 0; i < alone.tokens.size(); ++i)
        s.same_as_alone += alone.tokens[i] == s.run.requests[i].tokens ? 1 : 0;
    // The throughputs: this run and its alone runs, then more of each in turns (the same work:
    // the same tokens each time), the fastest of each: the run other programs on the machine
    // disturbed least.
    std::vector<double> batched{s.run.stats.tokens_per_second()}, one{alone.tokens_per_second()};
    for (int k = 1; k < plan.timing; ++k) {
        const ServeRun again = run_serve(model, backend, c, prompts, plan.arrivals);
        batched.push_back(again.stats.tokens_per_second());
        one.push_back(serve_alone(model, backend, again).tokens_per_second());
    }
    s.tokens_per_second = *std::max_element(batched.begin(), batched.end());
    s.alone_tokens_per_second = *std::max_element(one.begin(), one.end());
    s.window = serve_window_effect(model, backend, s.run);
    s.stream = serve_stream_effect(model, backend, s.run, alone.tokens);
    s.cache = serve_cache_type_effect(model, backend, s.run);
    s.f32_row_bytes = double(model.config().kv_bytes_per_token());
    s.weight_passes = static_cast<long long>(s.run.steps.size());
    for (const ServeRequest& r : s.run.requests) s.alone_weight_passes += r.generated();
    return s;
}

int serve_block(const LessonServe& s, int request, int position) {
    const int bs = s.run.stats.block_size;
    for (const TableSnapshot& t : s.run.shown_tables) {
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
                " was not running at the step the block tables were printed for");
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
        {"capped_blocks",
         "blocks contiguous caches sized to each prompt and its new-token cap would reserve, all "
         "requests"},
        {"context", "rows a contiguous cache reserves per request (the model's context)"},
        {"fragmentation", "slots allocated but unused, % of those allocated, over every step"},
        {"shared_blocks",
         "prefix blocks shared: full blocks requests found in the prefix cache at admission"},
        {"cached_rows", "rows of those blocks, not computed again"},
        {"most_cached_free", "most free blocks keeping a cached prefix block after a step"},
        {"evictions", "cached blocks taken for other rows"},
        {"prompt_rows", "prompt tokens of all requests"},
        {"prefill_rows", "rows computed in prefill passes (a preempted request's again too)"},
        {"preemptions", "times a running request gave its blocks back (computed again later)"},
        {"queued", "requests that waited at least one step"},
        {"waits_places", "steps requests waited for a batch place (summed over requests)"},
        {"waits_budget", "steps requests waited for the token budget"},
        {"waits_blocks", "steps requests waited for free blocks"},
        {"waits_preemption", "steps requests waited because the step preempted"},
        {"mixed_steps", "steps whose one pass held prefill rows and decode rows together"},
        {"chunked_steps", "steps whose pass held part of a prompt, the rest left for later"},
        {"budget", "rows a step's pass may hold (0: no budget)"},
        {"same_as_alone", "requests whose tokens equal their prompt served alone"},
        {"shown_tables",
         "block tables printed: the requests running when the most blocks were held (under a "
         "window: let go)"},
        {"weight_passes", "passes over the weights: the run's steps (counted)"},
        {"alone_weight_passes",
         "passes the same tokens take one request at a time: one per token sampled (counted)"},
        {"tokens_per_second",
         "generated tokens / the steps' summed wall time (measured; the fastest of timing= runs)",
         true},
        {"alone_tokens_per_second",
         "the same prompts served one at a time, one after the other (measured the same way)",
         true},
        {"window_passes", "passes compared, bounded cache against the full cache"},
        {"window_same", "of those, passes with the full cache's most likely next token"},
        {"window_max_logit_diff", "max |logit difference| bounded against full cache"},
        {"stream_tokens", "the requests' full-cache texts joined into one: its tokens"},
        {"ppl_full", "that text's perplexity within the context, full cache"},
        {"ppl_sinks_cache", "within the context, the window and sinks at cache positions"},
        {"ppl_sinks_cache_past", "past the context, the same"},
        {"ppl_sinks_original", "within the context, sinks at their original positions"},
        {"ppl_sinks_original_past", "past the context, the same"},
        {"ppl_no_sinks", "within the context, no sinks, the window widened by their rows"},
        {"ppl_no_sinks_past", "past the context, the same"},
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
    const StreamEffect& e = s.stream;
    if (f == "requests") return double(s.run.requests.size());
    if (f == "steps") return double(s.run.steps.size());
    if (f == "generated") return st.generated;
    if (f == "block_size") return st.block_size;
    if (f == "pool_blocks") return st.pool_blocks;
    if (f == "peak_blocks") return st.peak_blocks;
    if (f == "peak_running") return st.peak_running;
    if (f == "contiguous_blocks") return st.contiguous_blocks();
    if (f == "blocks_saved") return s.run.blocks_saved();
    if (f == "capped_blocks") {
        const int bs = st.block_size;
        long long n = 0;
        for (const ServeRequest& r : s.run.requests)
            n += (std::min(r.prompt_len + s.run.config.max_new_tokens - 1, st.context) + bs - 1) /
                 bs;
        return double(n);
    }
    if (f == "context") return st.context;
    if (f == "fragmentation") return st.fragmentation_percent();
    if (f == "shared_blocks") return st.cached_blocks_found;
    if (f == "cached_rows") return double(st.cached_rows);
    if (f == "most_cached_free") return s.run.most_cached_free;
    if (f == "evictions") return double(st.evictions);
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
    if (f == "waits_places") return double(st.waits[int(WaitReason::Places)]);
    if (f == "waits_budget") return double(st.waits[int(WaitReason::Budget)]);
    if (f == "waits_blocks") return double(st.waits[int(WaitReason::Blocks)]);
    if (f == "waits_preemption") return double(st.waits[int(WaitReason::Preemption)]);
    if (f == "mixed_steps") return s.run.mixed_steps;
    if (f == "chunked_steps") return s.run.chunked_steps;
    if (f == "budget") return s.run.config.max_num_batched_tokens;
    if (f == "same_as_alone") return s.same_as_alone;
    if (f == "shown_tables") return double(s.run.shown_tables.size());
    if (f == "weight_passes") return double(s.weight_passes);
    if (f == "alone_weight_passes") return double(s.alone_weight_passes);
    if (f == "tokens_per_second") return s.tokens_per_second;
    if (f == "alone_tokens_per_second") return s.alone_tokens_per_second;
    if (f == "window_passes") return s.window.passes;
    if (f == "window_same") return s.window.same_next_token;
    if (f == "window_max_logit_diff") return s.window.max_logit_difference;
    if (f == "stream_tokens") return e.tokens;
    if (f == "ppl_full") return e.full.within;
    if (f == "ppl_sinks_cache") return e.sinks_cache.within;
    if (f == "ppl_sinks_cache_past") return e.sinks_cache.past;
    if (f == "ppl_sinks_original") return e.sinks_original.within;
    if (f == "ppl_sinks_original_past") return e.sinks_original.past;
    if (f == "ppl_no_sinks") return e.no_sinks.within;
    if (f == "ppl_no_sinks_past") return e.no_sinks.past;
    if (f == "row_bytes") return double(st.bytes_per_row);
    if (f == "f32_row_bytes") return s.f32_row_bytes;
    if (f == "cache_passes") return s.cache.passes;
    if (f == "cache_same") return s.cache.same_next_token;
    if (f == "cache_max_logit_diff") return s.cache.max_logit_difference;
    throw Error("@serve has no figure \"" + f + "\"");
}

}  // namespace kvs
