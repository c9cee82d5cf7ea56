#pragma once
// The prompt and tokens panel (gui/panels/tokens.cpp) and what it keeps between frames.
#include "gui/draw/frame_context.h"
#include "gui/views/chip_flow.h"

namespace kvs::gui {

struct TokensPanel {
    // The chips drawn last frame: following the newest step, a new chip scrolls into view.
    int chips_drawn = -1;
    ChipFlow flow;  // where each chip goes, kept between frames
};

void draw_tokens(FrameContext& f, TokensPanel& panel);

}  // namespace kvs::gui
