#pragma once
// The attention matrix of one (layer, head) after step s (core/session/attention_matrix.h, put back
// together from the trace) as heatmap pixels.
#include "core/session/attention_matrix.h"
#include "gui/views/colormap.h"

namespace kvs::gui {

using kvs::attention_cell;
using kvs::AttentionMatrixRows;
using kvs::CellKind;
using kvs::CellValue;
using kvs::collect_attention_rows;
using kvs::RowRef;

// Pixels of query row q: `width` cells (width >= m.n); keys past q are masked.
void attention_row_pixels(const AttentionMatrixRows& m, int layer, int head, int q, int width,
                          const HeatmapPalette& pal, Rgba* out);

}  // namespace kvs::gui
