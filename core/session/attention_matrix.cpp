#include "core/session/attention_matrix.h"

#include <algorithm>

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
    // Each row from the step that holds it (core/session/step_rows.h): step s itself where it
    // kept the row, else the first that computed it; without the mask only step s.
    for (int q = 0; q < m.n; ++q) {
        const auto at = query_row_at(steps, s, q);
        if (!at || steps[at->step].attention.rows == 0) continue;
        m.rows[q] = {&steps[at->step].attention, at->row, at->step};
    }
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
