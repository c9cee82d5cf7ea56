#pragma once
// The lesson panel (gui/panel_lesson.cpp) and the lesson's stage (what a step measured, full
// size), and what each keeps between frames. Which lesson and step are open is shared
// (UiState::lesson).
#include <memory>
#include <string>
#include <vector>

#include "gui/markdown.h"
#include "gui/panels.h"
#include "lessonlib/roofline.h"

namespace kvs::gui {

struct LessonPanel {
    int scrolled_for = -1;  // the step the text was last scrolled to the top for
    float results_h = 0;    // height the step's results took last frame
    // The step's prose, parsed once: keyed by lesson, language and step; with an @ask, the
    // prose before it in `blocks` and after it in `blocks_after` (shown once it is answered).
    std::string blocks_key;
    std::vector<MdBlock> blocks, blocks_after;
};

void draw_lesson(FrameContext& f, LessonPanel& panel);

struct LessonStagePanel {
    // The roofline of the last @scale drawn, remade when the engine publishes another report.
    Roofline roofline;
    std::shared_ptr<const ScaleReport> roofline_for;
};

// What the lesson step measured (@batch, @scale), full size on the stage; lesson 8's KV caches at
// the KV panel's `kv_layer` (-1: the attention panel's).
void draw_lesson_stage(FrameContext& f, LessonStagePanel& panel, int kv_layer);

}  // namespace kvs::gui
