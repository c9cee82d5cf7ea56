#pragma once
// The full attention matrix of one (layer, head) as it stood after step s, put back together
// from the trace: the prefill's block of rows plus the one row each decode step computed (in
// either cache mode a decode step keeps only the new query's row). Nothing is recomputed here;
// rows whose step lost its payload to the trace's memory budget are reported missing. The
// window's heatmaps draw it (gui/attention_matrix.h), the CSV export writes it
// (core/trace_csv.h).
#include <cstdint>
#include <span>
#include <vector>

#include "core/session/trace.h"

namespace kvs {

// Where the row of one query position lives in the trace.
struct RowRef {
    const AttentionRows* rows = nullptr;  // null: not in the trace (payload dropped)
    int r = 0;                            // row index inside `rows`
    int step = -1;                        // the step that computed it
};

struct AttentionMatrixRows {
    int n = 0;  // query positions = key positions = tokens in the cache after step s
    int n_layers = 0, n_heads = 0;
    std::vector<RowRef> rows;        // [n]
    int new_begin = 0, new_end = 0;  // rows computed at step s: the prefill block or one row
    // Without the causal mask (bidirectional) every row is step s's own, over every key: rows
    // change at every step. -1 for a causal matrix.
    int all_keys_step = -1;
};

// `steps` is a trace's steps; s indexes into it. Layers/heads are taken from the first step
// that still holds attention.
AttentionMatrixRows collect_attention_rows(std::span<const StepRecord> steps, int s);

enum class CellKind : std::uint8_t { Weight, Masked, Missing, EmptyRow };

struct CellValue {
    CellKind kind = CellKind::Masked;
    float weight = 0;  // meaningful for CellKind::Weight
};
// Cell (query q, key k) of (layer, head); masked when k > q (unless the row has every key).
CellValue attention_cell(const AttentionMatrixRows& m, int layer, int head, int q, int k);

}  // namespace kvs
