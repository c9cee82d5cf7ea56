#include "gui/views/attention_matrix.h"

#include <algorithm>
#include <vector>

namespace kvs::gui {

void attention_row_pixels(const AttentionMatrixRows& m, int layer, int head, int q, int width,
                          const HeatmapPalette& pal, Rgba* out) {
    attention_block_pixels(m, layer, head, q, q + 1, 1, width, pal, out);
}

void attention_block_pixels(const AttentionMatrixRows& m, int layer, int head, int q0, int q1,
                            int stride, int width, const HeatmapPalette& pal, Rgba* out) {
    std::fill(out, out + width, pal.mask);
    stride = std::max(stride, 1);
    q0 = std::max(q0, 0);
    q1 = std::min(q1, m.n);
    if (q0 >= q1 || width <= 0) return;
    // Per pixel: the largest weight (-1: none), else 2 an empty row, 1 not in the trace, 0 masked.
    std::vector<float> best(static_cast<std::size_t>(width), -1.0f);
    std::vector<std::uint8_t> kind(static_cast<std::size_t>(width), 0);
    auto mark = [&](int keys, std::uint8_t k) {
        const int px = std::min(width, (keys + stride - 1) / stride);
        for (int c = 0; c < px; ++c) kind[c] = std::max(kind[c], k);
    };
    for (int q = q0; q < q1; ++q) {
        const RowRef& ref = m.rows[q];
        // The keys this row saw are the ones it kept (core's mask decided them); the rest stay
        // masked. Without its payload: the causal mask's q + 1 keys, or every key without it.
        if (!ref.rows || layer >= ref.rows->n_layers || head >= ref.rows->n_heads) {
            const bool causal =
                q + 1 >= m.n || attention_cell(m, layer, head, q, q + 1).kind == CellKind::Masked;
            mark(causal ? q + 1 : m.n, 1);
            continue;
        }
        const int keys = std::min(static_cast<int>(ref.rows->keys(ref.r)), width * stride);
        if (ref.rows->is_empty_row(layer, head, ref.r)) {
            mark(keys, 2);
            continue;
        }
        const auto row = ref.rows->row(layer, head, ref.r);
        const int n = std::min(keys, static_cast<int>(row.size()));
        for (int k = 0; k < n; ++k) {
            float& b = best[static_cast<std::size_t>(k / stride)];
            b = std::max(b, row[k]);
        }
    }
    for (int c = 0; c < width; ++c)
        out[c] = best[c] >= 0   ? weight_colour(best[c], pal.scale)
                 : kind[c] == 2 ? pal.empty_row
                 : kind[c] == 1 ? pal.missing
                                : pal.mask;
}

}  // namespace kvs::gui
