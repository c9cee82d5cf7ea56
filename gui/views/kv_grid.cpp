#include "gui/views/kv_grid.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/model/kv_rows.h"
#include "core/session/step_rows.h"

namespace kvs::gui {

KvGridColumns kv_grid_shape(std::span<const StepRecord> steps, int s) {
    KvGridColumns g;
    if (s < 0 || s >= static_cast<int>(steps.size())) return g;
    const StepRecord& cur = steps[s];
    g.n = cur.kv.len;
    g.n_layers = cur.kv.n_layers;
    g.kv_dim = cur.kv.n_kv_heads * cur.kv.head_dim;
    g.head_dim = cur.kv.head_dim;
    g.written_begin = std::clamp(cur.pos0, 0, g.n);
    g.written_end = std::clamp(cur.pos0 + cur.tokens_processed, 0, g.n);
    g.query_pos = g.n - 1;
    return g;
}

KvGridColumns collect_kv_columns(std::span<const StepRecord> steps, int s) {
    KvGridColumns g = kv_grid_shape(steps, s);
    if (g.n <= 0) return g;
    g.cols.assign(g.n, KvColumnRef{});
    // Each column from the step that holds it (core/session/step_rows.h): the step's own rows
    // where it kept them (a bidirectional step's every one moved), else the step that wrote it.
    const std::vector<KvAt> at = kv_rows_at(steps, s);
    for (int p = 0; p < g.n && p < static_cast<int>(at.size()); ++p)
        if (at[p].step && at[p].row >= 0)
            g.cols[p] = {at[p].step->kv_rows.data(), at[p].step->kv_rows_kept, at[p].row};
    return g;
}

KvGridColumns kv_columns_of_cache(const KvShape& kv, std::span<const float> rows, int written_begin,
                                  int written_end, int query_pos) {
    KvGridColumns g;
    g.n_layers = kv.n_layers;
    g.kv_dim = kv.n_kv_heads * kv.head_dim;
    g.head_dim = kv.head_dim;
    // Rows that do not hold the whole cache give an empty grid, never a read past them.
    if (kv.len <= 0 || rows.size() != ConstKvRows{nullptr, kv.n_layers, kv.len, g.kv_dim}.size())
        return g;
    g.n = kv.len;
    g.cols.resize(g.n);
    for (int p = 0; p < g.n; ++p) g.cols[p] = {rows.data(), kv.len, p};
    g.written_begin = std::clamp(written_begin, 0, g.n);
    g.written_end = std::clamp(written_end, g.written_begin, g.n);
    g.query_pos = std::clamp(query_pos, -1, g.n - 1);
    return g;
}

float kv_value(const KvGridColumns& g, int layer, int kv, int pos, int ch) {
    if (pos < 0 || pos >= g.n || pos >= static_cast<int>(g.cols.size()) || !g.cols[pos].rows)
        return std::numeric_limits<float>::quiet_NaN();
    const KvColumnRef& c = g.cols[pos];
    return ConstKvRows{c.rows, g.n_layers, c.kept, g.kv_dim}.row(layer, kv, c.row)[ch];
}

float kv_abs_max(const KvGridColumns& g, int layer) {
    float m = 0;
    for (int p = 0; p < static_cast<int>(g.cols.size()); ++p) {
        if (!g.cols[p].rows) continue;
        for (int kv = 0; kv < 2; ++kv)
            for (int ch = 0; ch < g.kv_dim; ++ch) {
                const float v = kv_value(g, layer, kv, p, ch);
                if (std::isfinite(v)) m = std::max(m, std::fabs(v));
            }
    }
    return m;
}

float kv_colour_scale(const KvGridColumns& g, int layer) {
    double sum = 0;
    std::size_t count = 0;
    for (int p = 0; p < static_cast<int>(g.cols.size()); ++p) {
        if (!g.cols[p].rows) continue;
        for (int kv = 0; kv < 2; ++kv)
            for (int ch = 0; ch < g.kv_dim; ++ch) {
                const float v = kv_value(g, layer, kv, p, ch);
                if (!std::isfinite(v)) continue;
                sum += double(v) * v;
                ++count;
            }
    }
    if (count == 0) return 1.0f;
    const float s = std::min(kv_abs_max(g, layer), 2.5f * float(std::sqrt(sum / count)));
    return s > 0 ? s : 1.0f;
}

void kv_column_pixels(const KvGridColumns& g, int layer, int pos, float scale, Rgba missing,
                      Rgba* out) {
    kv_block_pixels(g, layer, pos, pos + 1, scale, missing, out);
}

void kv_block_pixels(const KvGridColumns& g, int layer, int p0, int p1, float scale, Rgba missing,
                     Rgba* out) {
    for (int kv = 0; kv < 2; ++kv)
        for (int ch = 0; ch < g.kv_dim; ++ch) {
            float best = std::numeric_limits<float>::quiet_NaN();
            for (int p = p0; p < p1; ++p) {
                const float v = kv_value(g, layer, kv, p, ch);
                if (std::isfinite(v) && !(std::fabs(v) <= std::fabs(best))) best = v;
            }
            out[kv * g.kv_dim + ch] = std::isfinite(best) ? signed_colour(best, scale) : missing;
        }
}

int kv_texel_stride(int n) {
    int stride = 1;
    while ((n + stride - 1) / stride > KvTexels::kMaxColumns) stride *= 2;
    return stride;
}

bool kv_texels_current(const KvTexels& t, const KvGridColumns& g, std::uint64_t key) {
    return t.cap > 0 && key == t.key && 2 * g.kv_dim == t.height &&
           kv_texel_stride(g.n) == t.stride && g.n == t.cols;
}

KvTexelChange update_kv_texels(KvTexels& t, const KvGridColumns& g, int layer, Rgba missing,
                               std::uint64_t key) {
    const int n = g.n, h = 2 * g.kv_dim;
    if (h <= 0 || kv_texels_current(t, g, key)) return {};
    const int stride = kv_texel_stride(n);
    const int texels = (n + stride - 1) / stride;
    KvTexelChange change;
    if (key != t.key || h != t.height || stride != t.stride || texels > t.cap || t.cap == 0) {
        // One colour scale per key, from the values present now, so columns added later keep
        // the same meaning (larger values saturate); a wider block of the same key keeps it.
        if (key != t.key || h != t.height || t.cap == 0) t.scale = kv_colour_scale(g, layer);
        int cap = 16;
        while (cap < texels) cap *= 2;
        t.key = key;
        t.height = h;
        t.stride = stride;
        t.cap = cap;
        t.cols = 0;
        t.px.assign(std::size_t(cap) * h, missing);
        change.restarted = true;
    }
    // The texel columns whose positions changed: from the one holding the first position that
    // came (or went) to the last one that holds any.
    change.first = std::min(n, t.cols) / t.stride;
    change.last = (std::max(n, t.cols) + t.stride - 1) / t.stride;
    for (int c = change.first; c < change.last; ++c)
        kv_block_pixels(g, layer, c * t.stride, std::min(n, (c + 1) * t.stride), t.scale, missing,
                        t.px.data() + std::size_t(c) * h);
    if (change.last < change.first) change.last = change.first;
    t.cols = n;
    return change;
}

}  // namespace kvs::gui
