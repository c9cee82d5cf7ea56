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

// Query rows [q0, q1) folded into one row of `width` pixels, `stride` keys a pixel (a long
// context drawn at most a texture's side across): pixel c is the largest weight any of its
// stride x (q1 - q0) cells holds (a spike stays visible at any length), else what its cells are
// (an empty row, then a row not in the trace, then masked). stride 1 and q1 = q0 + 1: exactly
// attention_row_pixels. Rows without a payload cost their pixels, not their keys.
void attention_block_pixels(const AttentionMatrixRows& m, int layer, int head, int q0, int q1,
                            int stride, int width, const HeatmapPalette& pal, Rgba* out);

}  // namespace kvs::gui
