#pragma once
// The KV cache panel (gui/panels/kv_cache.cpp) and what it keeps between frames.
#include <cstdint>
#include <functional>
#include <string>

#include "gui/draw/frame_context.h"
#include "gui/views/kv_grid.h"

namespace kvs::gui {

struct KvCachePanel {
    // The layer shown, here and in lesson 8's batch of KV caches; -1: the attention panel's
    // (settings.layer).
    int layer = -1;
};

void draw_kv_cache(FrameContext& f, KvCachePanel& panel);

// One KV grid's cells (gui/views/kv_grid.h) through `tex` (uploaded when `key` changes): K above
// V, cell_w x cell_h pixels per value, from `at` + lab_w (the K and V labels in front; 0: none);
// the columns written last outlined, a bar under the columns the last query read. Recorded for
// --layout-json as `who`'s grid; hovering a cell names it. Returns where the cells are. Lesson
// 8's batch of caches draws its grids with it too.
struct KvCellsView {
    ImVec2 a, b;  // top left and bottom right of the cells
    float cell_w = 0, cell_h = 0;
};
// `g` may come without its columns (kv_grid_shape) and `collect` make them (collect_kv_columns):
// called only when the texture lacks columns or a cell is hovered, so a frame that changes
// nothing collects nothing.
KvCellsView draw_kv_cells(FrameContext& f, const KvGridColumns& g, int layer, KvTexture& tex,
                          std::uint64_t key, ImVec2 at, float lab_w, float cell_w, float cell_h,
                          const std::string& who,
                          const std::function<KvGridColumns()>& collect = nullptr);

}  // namespace kvs::gui
