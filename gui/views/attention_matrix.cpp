#include "gui/views/attention_matrix.h"

#include <algorithm>

namespace kvs::gui {

void attention_row_pixels(const AttentionMatrixRows& m, int layer, int head, int q, int width,
                          const HeatmapPalette& pal, Rgba* out) {
    std::fill(out, out + width, pal.mask);
    if (q < 0 || q >= m.n) return;
    const RowRef& ref = m.rows[q];
    // The keys this row saw are the ones it kept (core's mask decided them); the rest stay masked.
    if (!ref.rows || layer >= ref.rows->n_layers || head >= ref.rows->n_heads) {
        int keys = 0;
        while (keys < std::min(m.n, width) &&
               attention_cell(m, layer, head, q, keys).kind != CellKind::Masked)
            ++keys;
        std::fill(out, out + keys, pal.missing);
        return;
    }
    const int keys = std::min(static_cast<int>(ref.rows->keys(ref.r)), width);
    if (ref.rows->is_empty_row(layer, head, ref.r)) {
        std::fill(out, out + keys, pal.empty_row);
        return;
    }
    const auto row = ref.rows->row(layer, head, ref.r);
    for (int k = 0; k < keys && k < static_cast<int>(row.size()); ++k)
        out[k] = weight_colour(row[k], pal.scale);
}

}  // namespace kvs::gui
