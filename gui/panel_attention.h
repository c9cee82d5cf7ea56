#pragma once
// The attention panel (gui/panel_attention.cpp): the large heatmap and every head's small one,
// and what it keeps between frames.
#include "gui/panels.h"

namespace kvs::gui {

struct AttentionPanel {
    // The large heatmap shows the newest n / zoom tokens (mouse wheel; double-click: all;
    // --zoom), 1..64.
    float zoom = 1.0f;
};

void draw_attention(FrameContext& f, AttentionPanel& panel);

}  // namespace kvs::gui
