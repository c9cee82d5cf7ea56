#include "core/session/why_not_q.h"

#include <algorithm>
#include <cstdio>

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

std::string query_row_use_line(const QueryRowUse& u) {
    auto rows = [](int n, const char* what) {
        return std::to_string(n) + " " + what + (n == 1 ? " row" : " rows");
    };
    std::string s = "layer " + std::to_string(u.layer) + ": computed " + rows(u.computed, "query") +
                    ": " + std::to_string(u.for_output) + " for this token's output";
    const std::string next = "layer " + std::to_string(u.layer + 1) + "'s K/V rows";
    if (u.build_next_kv > 0)
        s += ", " + std::to_string(u.build_next_kv) + " to build " + next + " (kept in the cache)";
    if (u.rebuild_next_kv > 0)
        s += ", " + std::to_string(u.rebuild_next_kv) + " only to rebuild " + next +
             (u.rebuilt_changed ? " (no causal mask: each changed, no cache could keep them)"
                                : " (the step before computed them too)");
    if (u.thrown_away > 0)
        s += ", " + std::to_string(u.thrown_away) +
             " thrown away (the last layer: nothing reads their output)";
    if (u.computed == u.for_output) s += "; no earlier token's query is needed";
    return s;
}

double kv_recomputed_delta(const StepRecord& r, int layer) {
    const auto l = static_cast<std::size_t>(layer);
    if (layer < 0 || l >= r.kv_delta_k.size() || l >= r.kv_delta_v.size())
        return r.kv_recomputed_max_delta;
    return std::max(r.kv_delta_k[l], r.kv_delta_v[l]);
}

std::string kv_reuse_line(const StepRecord& r, int layer) {
    auto rows = [](int n, const char* what) {
        return std::to_string(n) + " " + what + (n == 1 ? " row" : " rows");
    };
    if (r.kv_rows_recomputed == 0) {
        const int read = r.kv.len - r.kv_rows_written;
        std::string s = read > 0 ? "read " + rows(read, "cached K/V") + ", " : "";
        return s + "wrote " + rows(r.kv_rows_written, "new K/V");
    }
    // Every uncached step (no cache, compare mode's twin, both sessions of the bidirectional
    // view) recomputes rows an earlier step computed: that step is what it is compared with.
    std::string s =
        "recomputed " + rows(r.kv_rows_recomputed, "K/V") + " the step before computed, ";
    const double d = kv_recomputed_delta(r, layer);
    char delta[64];
    std::snprintf(delta, sizeof delta, "%.3g", d);
    if (d < 0)
        s += "not compared (the trace keeps no K/V rows)";
    else if (d == 0)
        s += "all equal to that step's rows (max |Δ| = 0)";
    else
        s += std::string("differing from that step's rows by at most |Δ| = ") + delta;
    return s + ", and wrote " + rows(r.kv_rows_written - r.kv_rows_recomputed, "new K/V");
}

std::string why_not_q_line(const StepRecord& r, int layer, int n_layers) {
    const auto use = query_row_use(r, n_layers);
    if (layer < 0 || layer >= static_cast<int>(use.size())) return kv_reuse_line(r, -1);
    return query_row_use_line(use[layer]) + "; " + kv_reuse_line(r, layer);
}

}  // namespace kvs
