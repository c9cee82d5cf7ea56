#include "gui/views/step_map_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/util/numbering.h"
#include "gui/state/strings.h"

namespace kvs::gui {
namespace {

template <typename... Args>
std::string format(const char* fmt, Args... args) {
    char b[320];
    std::snprintf(b, sizeof b, fmt, args...);
    return b;
}

std::string count_text(int n) {
    return std::to_string(n);
}

MapLine line(const char* label, bool emphasis = false) {
    MapLine l;
    l.label = tr(label);
    l.emphasis = emphasis;
    return l;
}

}  // namespace

std::string run_text(const RowRun& r) {
    if (r.count <= 0) return tr("none");
    const int a = position_of_index(r.first), b = position_of_index(r.first + r.count - 1);
    return r.count == 1 ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b);
}

StepMapView step_map_view(const StepMap& m, const std::string& token) {
    StepMapView v;
    v.title = format(tr("step %d: the cache held %d rows; position %s joined (\"%s\"), its path "
                        "through every layer to the next token"),
                     m.step, m.held_before, run_text(m.joined).c_str(), token.c_str());
    const bool ran_cached = m.mode == CacheMode::Cached;
    v.cached.title = ran_cached ? tr("with the cache (how this step ran)")
                                : tr("with the cache (counted from the same shapes)");
    v.uncached.title = ran_cached ? tr("without the cache (counted from the same shapes)")
                                  : tr("without the cache (how this step ran)");
    v.cached.ran = ran_cached;
    v.uncached.ran = !ran_cached;
    MapLine cq = line(tr_later("queries computed: positions")),
            cn = line(tr_later("queries needed: how many"), true),
            cr = line(tr_later("K/V read from the cache: positions")),
            cw = line(tr_later("K/V written: positions"));
    MapLine uq = line(tr_later("queries computed: positions")),
            un = line(tr_later("queries needed: how many"), true),
            ub = line(tr_later("…only to rebuild the next layer's K/V")),
            ut = line(tr_later("…thrown away")), ur = line(tr_later("K/V recomputed: positions")),
            uw = line(tr_later("K/V written: positions"));
    MapLine ud = line(tr_later("recomputed − held, largest"));
    bool measured = false;
    for (const LayerMap& l : m.layers) {
        v.heads.push_back(format(tr("layer %d"), l.layer));
        const LayerWay &c = l.cached, &u = l.uncached;
        v.cached.possible = v.cached.possible && c.possible;
        cq.cells.push_back(c.possible ? run_text(c.queries) : "-");
        cn.cells.push_back(c.possible ? count_text(c.queries_needed) : "-");
        cr.cells.push_back(c.possible ? run_text(c.kv_read) : "-");
        cw.cells.push_back(c.possible ? run_text(c.kv_written) : "-");
        uq.cells.push_back(run_text(u.queries));
        un.cells.push_back(count_text(u.queries_needed));
        ub.cells.push_back(count_text(u.use.rebuild_next_kv + u.use.build_next_kv));
        ut.cells.push_back(count_text(u.use.thrown_away));
        ur.cells.push_back(run_text(u.kv_recomputed));
        uw.cells.push_back(run_text(u.kv_written));
        measured = measured || u.kv_delta >= 0;
        ud.cells.push_back(u.kv_delta >= 0 ? format("%.3g", u.kv_delta) : "-");
    }
    if (!v.cached.possible)
        v.cached.title =
            tr("with the cache: not possible without the causal mask (the new "
               "token changes every earlier row)");
    v.cached.lines = {cq, cn, cr, cw};
    v.uncached.lines = {uq, un, ub, ut, ur, uw};
    if (measured) v.uncached.lines.push_back(ud);
    v.note = tr(
        "needed: the query rows whose output something reads. Without the cache each "
        "layer below the last needs every earlier query, only to rebuild the next "
        "layer's K/V rows; the last layer needs only the newest, and with the cache no "
        "layer needs an earlier query: that is why K and V are kept and Q is not. Click a layer: "
        "Inside attention at that layer.");
    return v;
}

int MapColumns::layer_at(float x) const {
    if (x < label_w || col_w <= 0) return -1;
    const int l = static_cast<int>(std::floor((x - label_w) / col_w));
    return l < n ? l : -1;
}

MapColumns map_columns(int n_layers, float w, float label_w, float min_col_w) {
    MapColumns c;
    c.n = std::max(0, n_layers);
    c.label_w = label_w;
    c.col_w = c.n > 0 ? std::max(min_col_w, (w - label_w) / c.n) : 0;
    return c;
}

}  // namespace kvs::gui
