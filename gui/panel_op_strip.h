#pragma once
// The op strip (gui/panel_op_strip.cpp): every op of the step shown. Which op is highlighted is
// shared (ExplainUi: the keys walk it, --op sets it); what the strip keeps between frames is here.
#include "gui/panels.h"

namespace kvs::gui {

struct OpStripPanel {
    int scrolled_to = -2;  // the op the table last scrolled into view; -2: none
    int followed = -1;     // the op whose layer the inside-attention panel last took
};

void draw_op_strip(FrameContext& f, OpStripPanel& panel);

}  // namespace kvs::gui
