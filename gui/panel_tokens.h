#pragma once
// The prompt and tokens panel (gui/panel_tokens.cpp) and what it keeps between frames.
#include "gui/panels.h"

namespace kvs::gui {

struct TokensPanel {
    // The chips drawn last frame: following the newest step, a new chip scrolls into view.
    int chips_drawn = -1;
};

void draw_tokens(FrameContext& f, TokensPanel& panel);

}  // namespace kvs::gui
