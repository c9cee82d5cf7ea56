#pragma once
// The next-token panel (gui/panels/next_token.cpp): the step's top tokens with their
// probabilities (and, where there is room, logits), and the sampler's controls.
#include "gui/draw/frame_context.h"

namespace kvs::gui {

void draw_next_token(FrameContext& f);

}  // namespace kvs::gui
