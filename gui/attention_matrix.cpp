#include "gui/attention_matrix.h"

#include <algorithm>

namespace kvs::gui {

void attention_row_pixels(const AttentionMatrixRows& m, int layer, int head, int q, int width,
                          const HeatmapPalette& pal, Rgba* out) {
    std::fill(out, out + width, pal.mask);
    if (q < 0 || q >= m.n) return;
    const RowRef& ref = m.rows[q];
    const int keys = std::min(ref.rows && ref.rows->all_keys ? m.n : q + 1, width);
    if (!ref.rows || layer >= ref.rows->n_layers || head >= ref.rows->n_heads) {
        std::fill(out, out + keys, pal.missing);
        return;
    }
    if (ref.rows->is_empty_row(layer, head, ref.r)) {
        std::fill(out, out + keys, pal.empty_row);
        return;
    }
    const auto row = ref.rows->row(layer, head, ref.r);
    for (int k = 0; k < keys && k < static_cast<int>(row.size()); ++k)
        out[k] = weight_colour(row[k], pal.scale);
}

}  // namespace kvs::gui
