#include "gui/views/serving_layout.h"

#include <algorithm>
#include <cmath>

namespace kvs::gui {
namespace {

constexpr float kDesignFh = 16.0f;  // the text height the stage's reference sizes are taken at

// The pieces at text height fh, the grid's cells as large as its box lets them be (at most
// 8 lines of text), or `min_cell` when that is larger.
ServingLayout place(const ServingInput& in, float fh, float min_cell) {
    ServingLayout L;
    const Box c = in.content;
    const float gap = fh;
    L.line_h = std::ceil(fh * 1.3f);
    const float left_w = std::floor((c.w - gap) * 0.5f), right_x = c.x + left_w + gap;
    const float right_w = c.w - left_w - gap;
    L.pool_title = {c.x, c.y, left_w, L.line_h};
    // Under the grid: three lines of memory words and two bars, each a line high (the cached
    // blocks' line and bar, when there are any, below them: the view scrolls).
    const float memory_h = 5 * L.line_h + fh * 0.5f;
    const float grid_h = std::max(fh * 2, c.h - L.pool_title.h - memory_h - fh * 0.5f);
    const int n = std::max(1, in.blocks);
    float best = 0;
    int best_cols = 1;
    for (int cols = 1; cols <= n; ++cols) {
        const int rows = (n + cols - 1) / cols;
        const float side = std::min(left_w / cols, grid_h / rows);
        if (side > best) {
            best = side;
            best_cols = cols;
        }
    }
    L.cell = std::floor(std::max(std::min(best, fh * 8), min_cell));
    L.cols = std::max(1, std::min(best_cols, static_cast<int>(left_w / std::max(1.0f, L.cell))));
    L.rows = (n + L.cols - 1) / L.cols;
    L.grid = {c.x, c.y + L.pool_title.h, L.cols * L.cell, L.rows * L.cell};
    L.memory = {c.x, L.grid.y + L.grid.h + fh * 0.5f, left_w, memory_h};
    // The right column: a title line, the tables, a title line, the timeline, a title line,
    // the batch's bars (7 lines high) and their axis line.
    const int R = std::max(1, in.requests);
    L.table_row_h = std::ceil(fh * 1.5f);
    L.table_name_w = fh * 5.5f;
    L.table_state_w = fh * 5.5f;
    const float avail = right_w - L.table_name_w - L.table_state_w;
    int longest = 1;
    for (int len : in.table_lens) longest = std::max(longest, len);
    // As wide as the longest table lets every entry be (at most 2.2 text heights), never
    // narrower than a block number.
    L.table_cell_w = std::max(in.number_w + fh * 0.3f, std::min(fh * 2.2f, avail / longest));
    L.table_per_line = std::max(1, static_cast<int>(avail / L.table_cell_w));
    float y = c.y + L.line_h;
    for (int i = 0; i < R; ++i) {
        const int len = i < static_cast<int>(in.table_lens.size()) ? in.table_lens[i] : 0;
        const int lines = std::max(1, (len + L.table_per_line - 1) / L.table_per_line);
        L.table_y.push_back(y);
        L.table_lines.push_back(lines);
        y += lines * L.table_row_h;
    }
    L.tables = {right_x, c.y + L.line_h, right_w, y - (c.y + L.line_h)};
    L.timeline_row_h = std::ceil(fh * 1.1f);
    L.timeline = {right_x, L.tables.y + L.tables.h + L.line_h + fh * 0.5f, right_w,
                  R * L.timeline_row_h};
    L.batch = {right_x, L.timeline.y + L.timeline.h + L.line_h * 2 + fh * 0.5f, right_w, fh * 7};
    L.bottom = std::max({L.memory.y + L.memory.h, L.batch.y + L.batch.h + L.line_h});
    return L;
}

}  // namespace

ServingLayout layout_serving(const ServingInput& in) {
    // The grid at the design text height first (the same box): a larger text keeps its cells.
    const float ref_fh = std::min(in.fh, kDesignFh);
    float ref_cell = 0;
    if (in.fh > ref_fh) {
        const float r = ref_fh / in.fh;
        const Box &w = in.window, &c = in.content;
        ServingInput ref = in;
        ref.fh = ref_fh;
        ref.content.x = w.x + (c.x - w.x) * r;
        ref.content.y = w.y + (c.y - w.y) * r;
        ref.content.w = w.x + w.w - (w.x + w.w - c.x - c.w) * r - ref.content.x;
        ref.content.h = w.y + w.h - (w.y + w.h - c.y - c.h) * r - ref.content.y;
        ref_cell = place(ref, ref_fh, 0).cell;
    }
    return place(in, in.fh, ref_cell);
}

}  // namespace kvs::gui
