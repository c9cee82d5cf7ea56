#include "core/session/step_map.h"

namespace kvs {
namespace {

// The step's counts had it run one way: `processed` rows through the model, `recomputed` of them
// rows the cache held (query_row_use reads only these scalars).
std::vector<QueryRowUse> use_if(const StepRecord& r, int n_layers, int processed, int recomputed) {
    StepRecord as;
    as.mask = r.mask;
    as.tokens_processed = processed;
    as.kv_rows_recomputed = recomputed;
    return query_row_use(as, n_layers);
}

}  // namespace

StepMap step_map(const StepRecord& r, int n_layers) {
    StepMap m;
    m.step = r.index;
    m.phase = r.phase;
    m.mode = r.mode;
    m.mask = r.mask;
    m.n_layers = n_layers;
    m.len = r.kv.len;
    const int joined = static_cast<int>(r.new_tokens.size());
    m.held_before = r.kv.len - joined;
    m.joined = {m.held_before, joined};
    const bool causal = r.mask == AttentionMask::Causal;
    const auto cached = use_if(r, n_layers, joined, 0);
    const auto uncached = use_if(r, n_layers, m.len, m.held_before);
    for (int l = 0; l < n_layers; ++l) {
        LayerMap lm;
        lm.layer = l;
        LayerWay& c = lm.cached;
        c.possible = causal;
        c.queries = m.joined;
        c.use = cached[l];
        c.kv_read = {0, m.held_before};
        c.kv_written = m.joined;
        LayerWay& u = lm.uncached;
        u.queries = {0, m.len};
        u.use = uncached[l];
        u.kv_recomputed = {0, m.held_before};
        u.kv_written = m.joined;
        for (LayerWay* w : {&c, &u})
            w->queries_needed = w->use.for_output + w->use.build_next_kv + w->use.rebuild_next_kv;
        // The way the step ran: its own measured comparison of the rows it recomputed.
        if (r.mode == CacheMode::Uncached && r.kv_rows_recomputed > 0)
            u.kv_delta = kv_recomputed_delta(r, l);
        m.layers.push_back(lm);
    }
    return m;
}

}  // namespace kvs
