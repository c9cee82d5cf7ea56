#pragma once
// The lesson panel (gui/panels/lesson.cpp): a lesson's title, the step's text, its question
// (gui/panels/lesson_question.cpp) and what the step did on the live engine; and the lesson's
// stage, what a step measured full size (gui/panels/lesson_stage.cpp). Which lesson and step are
// open (LessonUi) is the lesson's state beside its panel: the toolbar, the keys, the menu and
// --lesson open them, the stage follows the step's @show. What the engine did for them is in the
// snapshot's LessonRun.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gui/draw/frame_context.h"
#include "gui/draw/markdown_view.h"
#include "gui/state/lesson_catalog.h"
#include "gui/views/markdown.h"
#include "lessonlib/lesson_ask.h"
#include "lessonlib/roofline.h"

namespace kvs {
struct BatchTable;  // lessonlib/batch_sweep.h
}  // namespace kvs

namespace kvs::gui {

// Which lesson and step are open, and what the learner answered.
struct LessonUi {
    LessonCatalog catalog;
    bool catalog_loaded = false;
    int number = 0;  // the lesson open; 0: none
    int step = 0;    // the step shown, from 0
    // @ask: what the learner answered in the lesson open, by step (an empty answer: they asked
    // to see the engine's without one); the number being typed for the step's question.
    std::map<int, LearnerAnswer> answers;
    std::string typed;
};

// The lesson panel's actions (buttons, keys, the menu, --lesson): they show step `step` of
// lesson `number` and have the engine play it (the next step on top of the previous ones, else
// a replay from the first step). A lesson that cannot be read shows its error instead.
// A step with an @ask not yet answered waits for its answer before the engine plays it.
void open_lesson(UiState& ui, LessonUi& lesson, EngineWorker& worker, int number, int step);
void lesson_next(FrameContext& f, LessonUi& lesson);
void lesson_back(FrameContext& f, LessonUi& lesson);
void close_lesson(UiState& ui);
// The lesson catalogue, read when first needed.
LessonCatalog& lesson_catalog(LessonUi& lesson);

// The lesson step shown asks its question and waits (its @ask not yet answered).
bool lesson_question_waits(UiState& ui, LessonUi& lesson);
// The learner's answer to the step's question: kept, then the engine plays the step.
void answer_lesson_question(UiState& ui, LessonUi& lesson, EngineWorker& worker,
                            const LearnerAnswer& a);
// Keys while the question waits: 1-4 choose, digits, '.', '-' and Backspace type a number, Enter
// gives it (nothing typed: the engine's answer without one). True when `key` (GLFW) was used.
bool lesson_question_key(FrameContext& f, LessonUi& lesson, int key);

// The heads the lesson step shown compares, when it highlights more than one (lesson 7: two query
// heads of one K/V group), as (layer, head) in the order of its @highlight lines; else empty.
std::vector<std::pair<int, int>> lesson_step_heads(FrameContext& f, LessonUi& lesson);

struct LessonPanel {
    int scrolled_for = -1;  // the step the text was last scrolled to the top for
    float results_h = 0;    // height the step's results took last frame
    // The step's prose, parsed once: keyed by lesson, language and step; with an @ask, the
    // prose before it in `blocks` and after it in `blocks_after` (shown once it is answered).
    std::string blocks_key;
    std::vector<MdBlock> blocks, blocks_after;
};

void draw_lesson(FrameContext& f, LessonPanel& panel, LessonUi& lesson);
// The question, or the learner's answer beside the engine's with the why, at the cursor (the
// lesson panel's results, always in view).
void draw_lesson_question(FrameContext& f, LessonUi& lesson, const LessonStep& step,
                          const StepOutcome* out, LessonRecord* rec, const MdStyle& style);

struct LessonStagePanel {
    // The roofline of the last @scale drawn, remade when the engine publishes another report.
    Roofline roofline;
    std::shared_ptr<const ScaleReport> roofline_for;
};

// What the lesson step measured (@batch, @scale), full size on the stage; lesson 8's KV caches at
// the KV panel's `kv_layer` (-1: the attention panel's).
void draw_lesson_stage(FrameContext& f, LessonStagePanel& panel, int kv_layer);
// The roofline picture of a @scale (lessonlib/roofline.h), `size` in pixels
// (gui/panels/lesson_roofline.cpp).
void draw_roofline(FrameContext& f, const Roofline& r, ImVec2 size);
// Lesson 8: the KV caches of the batch sweep's last run side by side, one per sequence, at the
// KV panel's `layer` (-1: the attention panel's), in a box of `size` at the cursor
// (gui/panels/lesson_batch_caches.cpp).
void draw_batch_caches(FrameContext& f, const BatchTable& t, int layer, ImVec2 size);

}  // namespace kvs::gui
