#pragma once
// The attention panel (gui/panels/attention.cpp): the large heatmap and every head's small one,
// and what it keeps between frames. A click on a row opens Inside attention on it; a lesson step
// that highlights two heads draws both.
#include "gui/draw/frame_context.h"
#include "gui/panels/inside_attention.h"
#include "gui/panels/lesson.h"

namespace kvs::gui {

struct AttentionPanel {
    // The large heatmap shows the newest n / zoom tokens (mouse wheel; double-click: all;
    // --zoom), 1..64.
    float zoom = 1.0f;
};

void draw_attention(FrameContext& f, AttentionPanel& panel, ExplainUi& explain, LessonUi& lesson);
// The bidirectional view's measurement, max |ΔK| per layer for each session, at `at`, `width`
// wide; returns the height drawn (gui/panels/attention_kv_deltas.cpp).
float draw_kv_deltas(FrameContext& f, ImVec2 at, float width, bool draw = true);

}  // namespace kvs::gui
