#pragma once
// What a key or a button does to the run shown (the toolbar's buttons, the keys of
// gui/state/shortcuts.h): a step, the prefill, a reset, the cache view, the prompt, the language.
// Each asks the engine worker (gui/engine/engine_worker.h) and sets what the window shows; none
// waits for a step.
#include <string>

#include "gui/draw/frame_context.h"

namespace kvs::gui {

// The next step: the prefill first, then one decode step; after the end of generation, a notice
// says why it ended.
void request_step(FrameContext& f);
void request_prefill(FrameContext& f);
void request_reset(FrameContext& f);
// C: the cache's own views in turn (on, off, compare both); from the bidirectional view, on.
void cycle_cache(FrameContext& f);
// The bidirectional view (M): the same model without its causal mask beside it, and back.
void toggle_bidirectional(FrameContext& f);
// The prompt field's text as the sessions' prompt.
void apply_prompt(FrameContext& f);
// Sets the language of the window and the lessons ("en" / "zh").
void set_ui_language(UiState& ui, const std::string& code);

}  // namespace kvs::gui
