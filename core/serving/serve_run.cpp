#include "core/serving/serve_run.h"

#include <algorithm>

#include "core/serving/kv_calibration.h"

namespace kvs {

ServeRun run_serve(const Model& model, Backend& backend, const ServeConfig& config,
                   std::span<const std::vector<int>> prompts, std::span<const int> arrivals,
                   const std::function<void(const ServeProgress&)>& on_step) {
    ServeConfig cfg = config;
    if (cfg.cache_type != KvCacheType::F32 && cfg.scale_mode != KvScaleMode::Token &&
        cfg.scales.k.empty())
        cfg.scales = calibrate_kv_scales(model, backend, prompts, cfg.cache_type, cfg.scale_mode);
    Scheduler s(model, backend, cfg);
    for (std::size_t i = 0; i < prompts.size(); ++i)
        s.submit(prompts[i], i < arrivals.size() ? arrivals[i] : 0);
    ServeRun run;
    int most = -1, run_so_far = 0;
    while (!s.finished()) {
        const ServeStep& st = s.step();
        if (st.prefill_rows > 0 && st.decode_rows > 0) ++run.mixed_steps;
        if (st.partial_prompts > 0) ++run.chunked_steps;
        run.longest_queue = std::max(run.longest_queue, st.queued);
        run.most_cached_free = std::max(run.most_cached_free, st.cached_free_blocks);
        ++run_so_far;
        // Retired requests have given their blocks back: what is held now is what runs on.
        int let_go = 0;
        for (const ServeRequest& r : s.requests())
            if (r.slot >= 0) let_go += int(std::count(r.table.begin(), r.table.end(), -1));
        const int measure = config.window > 0 ? let_go : s.blocks().used_blocks();
        if (measure > most) {
            most = measure;
            run.shown_step = st.index;
            run.shown_steps_run = run_so_far;
            run.shown_tables.clear();
            for (const ServeRequest& r : s.requests())
                if (r.slot >= 0) run.shown_tables.push_back({r.id, r.table, r.len});
        }
        if (on_step) {
            ServeProgress p{st.index, 0, static_cast<int>(s.requests().size()), 0};
            for (const ServeRequest& r : s.requests()) {
                p.finished += r.finish != FinishReason::None;
                p.generated += r.generated();
            }
            on_step(p);
        }
    }
    run.config = s.config();
    run.stats = s.stats();
    run.requests = s.requests();
    run.steps = s.steps();
    return run;
}

AloneRuns serve_alone(const Model& model, Backend& backend, const ServeRun& run) {
    ServeConfig alone = run.config;
    alone.max_num_seqs = 1;
    alone.pool_blocks = 0;  // one context's blocks: never dry for one request
    alone.max_num_batched_tokens = 0;
    alone.prefix_caching = false;
    alone.window = alone.sinks = 0;
    alone.cache_type = KvCacheType::F32;
    alone.scale_mode = KvScaleMode::Token;
    alone.scales = {};
    AloneRuns out;
    for (const ServeRequest& r : run.requests) {
        const std::vector<int> prompt(r.tokens.begin(), r.tokens.begin() + r.prompt_len);
        const ServeRun one = run_serve(model, backend, alone, std::span(&prompt, 1));
        out.tokens.push_back(one.requests.at(0).tokens);
        out.generated += one.stats.generated;
        out.seconds += one.stats.seconds;
    }
    return out;
}

int requests_same_as_alone(const Model& model, Backend& backend, const ServeRun& run) {
    const AloneRuns alone = serve_alone(model, backend, run);
    int same = 0;
    for (std::size_t i = 0; i < run.requests.size(); ++i)
        same += alone.tokens[i] == run.requests[i].tokens ? 1 : 0;
    return same;
}

namespace {
// Each request's tokens (within the context) through the full cache and `variant`, summed.
CacheEffect serve_effect(const Model& model, Backend& backend, const ServeRun& run,
                         const CacheVariant& variant) {
    CacheEffect all;
    const std::size_t ctx = model.config().seq_len;
    for (const ServeRequest& r : run.requests) {
        const std::span<const int> seen(r.tokens.data(), std::min(r.tokens.size(), ctx));
        const CacheEffect e =
            cache_effect(model, backend, seen, r.prompt_len, variant, run.config.block_size);
        all.passes += e.passes;
        all.same_next_token += e.same_next_token;
        all.max_logit_difference = std::max(all.max_logit_difference, e.max_logit_difference);
    }
    return all;
}
}  // namespace

CacheEffect serve_window_effect(const Model& model, Backend& backend, const ServeRun& run) {
    if (run.config.window == 0) return {};
    CacheVariant v;
    v.sinks = run.config.sinks;
    v.window = run.config.window;
    v.positions = run.config.sink_positions;
    return serve_effect(model, backend, run, v);
}

CacheEffect serve_cache_type_effect(const Model& model, Backend& backend, const ServeRun& run) {
    if (run.config.cache_type == KvCacheType::F32) return {};
    CacheVariant v;
    v.type = run.config.cache_type;
    v.scale_mode = run.config.scale_mode;
    v.scales = run.config.scales;
    return serve_effect(model, backend, run, v);
}

StreamEffect serve_stream_effect(const Model& model, Backend& backend, const ServeRun& run,
                                 std::span<const std::vector<int>> alone) {
    if (run.config.window == 0) return {};
    // One text: each request's after the other, an end token that the next text begins with
    // (llama2.c's BOS ends one story and begins the next) written once.
    std::vector<int> text;
    for (const std::vector<int>& t : alone)
        for (std::size_t i = 0; i < t.size(); ++i)
            if (i > 0 || text.empty() || text.back() != t[0]) text.push_back(t[i]);
    return stream_effect(model, backend, text, run.config.sinks, run.config.window,
                         run.config.block_size);
}

}  // namespace kvs
