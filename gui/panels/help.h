#pragma once
// The F1 overlay (gui/panels/help.cpp): every key, in the window's language.
#include "gui/draw/frame_context.h"

namespace kvs::gui {

void draw_help(FrameContext& f);

}  // namespace kvs::gui
