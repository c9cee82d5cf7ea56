#pragma once
// The toolbar (gui/panels/toolbar.cpp): the model, backend, cache mode, stepping, the step slider,
// the lesson, language and export buttons, and the status line (what runs where, a recorded
// run's provenance, the messages of the moment). Large text on a small window shows its stepping
// row only, the rest behind More (FrameContext::toolbar_compact).
#include "gui/draw/frame_context.h"
#include "gui/panels/lesson.h"

namespace kvs::gui {

void draw_toolbar(FrameContext& f, LessonUi& lesson);

}  // namespace kvs::gui
