#pragma once
// The "Inside attention" panel (gui/panels/inside_attention.cpp): one query row of one (layer,
// head) as softmax(q·Kᵀ/√d_k + mask)·V with the row's own numbers, built stage by stage. Its state
// is which row it shows and how far its stages have gone (ExplainUi), shared with the op strip
// (gui/panels/op_strip.h), which highlights one op of the step and moves the row's layer with it.
// Opened by a click on a heatmap, the keys, a lesson's @explain or --explain.
#include <cstdint>

#include "gui/draw/frame_context.h"
#include "gui/panels/inside_projection.h"

namespace kvs::gui {

struct ExplainUi {
    bool open = false;
    bool from_lesson = false;  // opened by a lesson's @explain: closes when the lesson moves on
    int session = 0;           // whose trace (compare mode: the heatmap clicked)
    int layer = 0, head = 0;
    int q_pos = -1;  // the query's position; -1: the newest row of the step shown
    // The stage shown (kExplainStages: where q, k and v come from, then the row's arithmetic);
    // -1: every stage of the arithmetic at once. Played:
    // the next stage every kStagePlaySeconds.
    int stage = -1;
    bool stage_playing = false;
    double stage_shown_at = 0;
    bool op_strip = false;
    int op = -1;                            // the op highlighted in the op strip; -1: none
    std::uint64_t seen_lesson_explain = 0;  // the lesson's last @explain followed (its serial)
    WeightStripCache strips;                // the weight rows a projection stage shows
};

// Opens the panel on (layer, head) at query position q_pos (-1: the newest) of session
// `session`; the heatmap shown large follows (the settings' layer and head).
void open_inside_attention(UiState& ui, ExplainUi& x, int session, int layer, int head, int q_pos);
// The query row above / below (delta -1 / +1), clamped to the rows computed.
void move_inside_attention_row(FrameContext& f, ExplainUi& x, int delta);
// The next / previous stage (from every stage at once to the first, from the last back to all).
void step_explain_stage(ExplainUi& x, int delta);
// The panel's keys (gui/state/shortcuts.h): I opens it on the settings' layer and head or closes
// it; S shows the next stage (back: the one before) and A plays them from the first, each opening
// the panel first; O opens or closes the op strip.
void toggle_inside_attention(UiState& ui, ExplainUi& x);
void explain_stage_key(UiState& ui, ExplainUi& x, bool back);
void play_explain_stages(UiState& ui, ExplainUi& x);
void toggle_op_strip(UiState& ui, ExplainUi& x);
// A lesson's @explain opens the panel on its layer, head and row; a row a lesson's earlier step
// opened closes when the lesson moves on without one. (A lesson played to its end in one go, a
// replay, shows the @explain of the step it stopped at only.)
void follow_lesson_explain(UiState& ui, ExplainUi& x, const LessonRun& run);
void draw_inside_attention(FrameContext& f, ExplainUi& x);

}  // namespace kvs::gui
