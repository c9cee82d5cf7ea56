#pragma once
// The toy example's table (gui/panels/toy.cpp): each head's output per token, as the tutorial
// writes it.
#include "gui/draw/frame_context.h"

namespace kvs::gui {

void draw_toy_table(FrameContext& f);

}  // namespace kvs::gui
