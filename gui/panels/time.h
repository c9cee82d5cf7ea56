#pragma once
// The time panel (gui/panels/time.cpp): each step's measured time and counted FLOPs, the memory
// traffic of each step against the position, and the step shown marked.
#include "gui/draw/frame_context.h"

namespace kvs::gui {

void draw_time(FrameContext& f);

}  // namespace kvs::gui
