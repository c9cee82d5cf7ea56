#pragma once
// The op strip (gui/panels/op_strip.cpp): every op of the step shown. Which op is highlighted is
// shared with Inside attention (ExplainUi: the keys walk it, --op sets it); what the strip keeps
// between frames is here.
#include "gui/draw/frame_context.h"
#include "gui/panels/inside_attention.h"

namespace kvs::gui {

struct OpStripPanel {
    int scrolled_to = -2;  // the op the table last scrolled into view; -2: none
    int followed = -1;     // the op whose layer the inside-attention panel last took
};

// Highlights the next / previous op of the step shown (opening the strip); the inside-attention
// panel follows the op's layer.
void walk_ops(FrameContext& f, ExplainUi& x, int delta);
void draw_op_strip(FrameContext& f, OpStripPanel& panel, ExplainUi& x);

}  // namespace kvs::gui
