#include "core/serving/serve_run.h"

#include <algorithm>

namespace kvs {

ServeRun run_serve(const Model& model, Backend& backend, const ServeConfig& config,
                   std::span<const std::vector<int>> prompts, std::span<const int> arrivals,
                   const std::function<void(const ServeProgress&)>& on_step) {
    Scheduler s(model, backend, config);
    for (std::size_t i = 0; i < prompts.size(); ++i)
        s.submit(prompts[i], i < arrivals.size() ? arrivals[i] : 0);
    ServeRun run;
    int fullest = -1;
    while (!s.finished()) {
        const ServeStep& st = s.step();
        if (st.prefill_rows > 0 && st.decode_rows > 0) ++run.mixed_steps;
        run.longest_queue = std::max(run.longest_queue, st.queued);
        // Retired requests have given their blocks back: what is held now is what runs on.
        if (s.pool().used_blocks() > fullest) {
            fullest = s.pool().used_blocks();
            run.fullest_step = st.index;
            run.fullest_tables.clear();
            for (const ServeRequest& r : s.requests())
                if (r.slot >= 0) run.fullest_tables.push_back({r.id, r.table, r.len});
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

int requests_same_as_alone(const Model& model, Backend& backend, const ServeRun& run) {
    ServeConfig alone = run.config;
    alone.batch_limit = 1;
    alone.pool_blocks = 0;  // one context's blocks: never dry for one request
    alone.prefix_sharing = false;
    alone.window = alone.sinks = 0;
    alone.cache_type = KvCacheType::F32;
    int same = 0;
    for (const ServeRequest& r : run.requests) {
        const std::vector<int> prompt(r.tokens.begin(), r.tokens.begin() + r.prompt_len);
        const ServeRun one = run_serve(model, backend, alone, std::span(&prompt, 1));
        if (one.requests.at(0).tokens == r.tokens) ++same;
    }
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
    return serve_effect(model, backend, run,
                        {KvCacheType::F32, run.config.sinks, run.config.window});
}

CacheEffect serve_cache_type_effect(const Model& model, Backend& backend, const ServeRun& run) {
    if (run.config.cache_type == KvCacheType::F32) return {};
    return serve_effect(model, backend, run, {run.config.cache_type, 0, 0});
}

}  // namespace kvs
