#include "core/session/attention_matrix.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/session/step_rows.h"

namespace kvs {

AttentionMatrixRows collect_attention_rows(std::span<const StepRecord> steps, int s) {
    AttentionMatrixRows m;
    if (s < 0 || s >= static_cast<int>(steps.size())) return m;
    m.n = steps[s].kv.len;
    m.rows.assign(m.n, RowRef{});
    const int before = s > 0 ? steps[s - 1].kv.len : 0;
    // Uncached decode rebuilds the cache from scratch but computes only the new query's row;
    // either way the rows new at step s are the positions the cache grew by.
    m.new_begin = std::min(before, m.n);
    m.new_end = m.n;
    for (int k = 0; k <= s; ++k) {
        const AttentionRows& a = steps[k].attention;
        if (a.rows == 0 || a.n_layers == 0) continue;
        m.n_layers = a.n_layers;
        m.n_heads = a.n_heads;
        break;
    }
    // Each row from the step that holds it, as query_row_at says (core/session/step_rows.h):
    // step s itself where it kept the row, else the first earlier step that kept it; without the
    // mask only step s. One pass over the steps' row ranges, each position filled once (asking
    // query_row_at per position scans the steps again for each: T x steps a frame).
    const QueryRows own = query_rows_of(steps[s]);
    if (steps[s].mask != AttentionMask::Bidirectional) {
        // next_free[p]: the first position >= p not yet filled (m.n: none), path-compressed.
        std::vector<int> next_free(m.n + 1);
        for (int p = 0; p <= m.n; ++p) next_free[p] = p;
        auto find = [&](int p) {
            int root = p;
            while (next_free[root] != root) root = next_free[root];
            while (next_free[p] != root) p = std::exchange(next_free[p], root);
            return root;
        };
        for (int k = 0; k < s; ++k) {
            if (steps[k].attention.rows == 0) continue;  // a dropped payload holds no row
            const QueryRows rows = query_rows_of(steps[k]);
            const int lo = std::max(rows.first, 0), hi = std::min(rows.first + rows.count, m.n);
            for (int q = find(lo); q < hi; q = find(q)) {
                if (!own.has(q)) m.rows[q] = {&steps[k].attention, q - rows.first, k};
                next_free[q] = q + 1;
            }
        }
    }
    if (steps[s].attention.rows > 0)
        for (int q = std::max(own.first, 0); q < std::min(own.first + own.count, m.n); ++q)
            m.rows[q] = {&steps[s].attention, q - own.first, s};
    if (steps[s].attention.all_keys) m.all_keys_step = s;
    return m;
}

CellValue attention_cell(const AttentionMatrixRows& m, int layer, int head, int q, int k) {
    if (q < 0 || q >= m.n || k < 0 || k >= m.n) return {CellKind::Masked, 0};
    const RowRef& ref = m.rows[q];
    const KeyMask mask{ref.rows && ref.rows->all_keys ? AttentionMask::Bidirectional
                                                      : AttentionMask::Causal};
    if (!key_visible(mask, q, k, 0, m.n)) return {CellKind::Masked, 0};
    if (!ref.rows || layer < 0 || layer >= ref.rows->n_layers || head < 0 ||
        head >= ref.rows->n_heads)
        return {CellKind::Missing, 0};
    if (ref.rows->is_empty_row(layer, head, ref.r)) return {CellKind::EmptyRow, 0};
    return {CellKind::Weight, ref.rows->row(layer, head, ref.r)[k]};
}

}  // namespace kvs
