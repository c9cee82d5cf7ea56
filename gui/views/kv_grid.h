#pragma once
// The KV cache as the trace recorded it: column p holds the K and V rows of token p, taken from
// the step that wrote them (StepRecord::kv_rows, [n_layers, 2, rows, kv_dim]). The grid after
// step s has one column per token in the cache; nothing here recomputes a value. A cache read
// whole from its slot (lesson 8's batch, lessonlib/batch_sweep.h) is the same grid with every
// column from one block of rows.
#include <span>
#include <vector>

#include "core/session/trace.h"
#include "gui/views/colormap.h"

namespace kvs::gui {

struct KvColumnRef {
    const float* rows = nullptr;  // the block holding the column: [n_layers, 2, kept, kv_dim]
    int kept = 0;                 // rows in that block; null rows: the step's payload was dropped
    int row = 0;                  // row inside the block
};

struct KvGridColumns {
    int n = 0;  // tokens in the cache after step s (columns)
    int n_layers = 0;
    int kv_dim = 0;  // n_kv_heads * head_dim: values per token per layer, for K and again for V
    int head_dim = 0;
    std::vector<KvColumnRef> cols;  // [n]
    // Columns the step wrote: one in cached decode, every one when the cache was rebuilt.
    int written_begin = 0, written_end = 0;
    int query_pos = -1;  // position of the step's last query, which reads columns 0..query_pos
};

KvGridColumns collect_kv_columns(std::span<const StepRecord> steps, int s);
// A cache of shape `kv` whose rows 0..kv.len-1 are `rows` ([n_layers, 2, kv.len, kv_dim], kept
// alive by the caller); columns written_begin..written_end-1 were written last, and the last
// query read up to query_pos (-1: none).
KvGridColumns kv_columns_of_cache(const KvShape& kv, std::span<const float> rows, int written_begin,
                                  int written_end, int query_pos);

// K (kv = 0) or V (kv = 1) value of token `pos`, channel `ch`; NaN when not in the trace.
float kv_value(const KvGridColumns& g, int layer, int kv, int pos, int ch);
// Largest |value| of one layer over the columns present (0 when none): the colour scale.
float kv_abs_max(const KvGridColumns& g, int layer);
// The |value| drawn at full colour for one layer: 2.5 x the RMS of the values present (at most
// their largest |value|), so a few large channels do not wash the rest out. 1 when empty.
float kv_colour_scale(const KvGridColumns& g, int layer);
// One column of one layer, top to bottom: K channels 0..kv_dim-1, then V channels.
void kv_column_pixels(const KvGridColumns& g, int layer, int pos, float scale, Rgba missing,
                      Rgba* out);

}  // namespace kvs::gui
