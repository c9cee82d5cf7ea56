#include "core/session/attention_matrix.h"

#include <algorithm>

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
        if (m.n_layers == 0) {
            m.n_layers = a.n_layers;
            m.n_heads = a.n_heads;
        }
        for (int r = 0; r < a.rows; ++r) {
            const int q = a.q_pos0 + r;
            // The first step that computed a position wins; later ones recompute the same row.
            // Without the mask a later step's row differs: the latest wins.
            if (q < m.n && (!m.rows[q].rows || a.all_keys)) m.rows[q] = {&a, r, k};
        }
        if (a.all_keys) m.all_keys_step = k;
    }
    return m;
}

CellValue attention_cell(const AttentionMatrixRows& m, int layer, int head, int q, int k) {
    if (q < 0 || q >= m.n || k < 0 || k >= m.n) return {CellKind::Masked, 0};
    const RowRef& ref = m.rows[q];
    if (k > q && !(ref.rows && ref.rows->all_keys)) return {CellKind::Masked, 0};
    if (!ref.rows || layer < 0 || layer >= ref.rows->n_layers || head < 0 ||
        head >= ref.rows->n_heads)
        return {CellKind::Missing, 0};
    if (ref.rows->is_empty_row(layer, head, ref.r)) return {CellKind::EmptyRow, 0};
    return {CellKind::Weight, ref.rows->row(layer, head, ref.r)[k]};
}

}  // namespace kvs
