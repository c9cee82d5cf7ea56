#include "core/session/why_not_q.h"

#include <algorithm>

namespace kvs {

std::vector<QueryRowUse> query_row_use(const StepRecord& r, int n_layers) {
    std::vector<QueryRowUse> out;
    const int T = r.tokens_processed;
    const int earlier = std::max(T - 1, 0);
    // The earlier rows' positions the cache held before the step: their next-layer K/V rows
    // existed already (an uncached decode recomputes them all).
    const int held = std::clamp(r.kv_rows_recomputed, 0, earlier);
    for (int l = 0; l < n_layers; ++l) {
        QueryRowUse u;
        u.layer = l;
        u.computed = T;
        u.for_output = T > 0 ? 1 : 0;
        u.rebuilt_changed = r.mask == AttentionMask::Bidirectional;
        if (l + 1 < n_layers) {
            u.rebuild_next_kv = held;
            u.build_next_kv = earlier - held;
        } else {
            u.thrown_away = earlier;
        }
        out.push_back(u);
    }
    return out;
}

double kv_recomputed_delta(const StepRecord& r, int layer) {
    const auto l = static_cast<std::size_t>(layer);
    if (layer < 0 || l >= r.kv_delta_k.size() || l >= r.kv_delta_v.size())
        return r.kv_recomputed_max_delta;
    return std::max(r.kv_delta_k[l], r.kv_delta_v[l]);
}

}  // namespace kvs
