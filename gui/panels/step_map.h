#pragma once
// The map of the step (gui/panels/step_map.cpp): every layer as a column, the new token's path
// across them, and per layer the query rows and K/V rows with the cache and without it
// (core/session/step_map.h, laid out by gui/views/step_map_view.h). A click on a layer's column
// opens Inside attention at that layer. Key Y shows it alone in the window.
#include "gui/draw/frame_context.h"
#include "gui/panels/inside_attention.h"

namespace kvs::gui {

struct StepMapPanel {
    int hovered = -1;  // the layer under the mouse last frame; -1: none
};

// What a click on layer `layer`'s column does: Inside attention opens there (the head shown
// large, the newest row); the map shown alone gives the window to it.
void open_map_layer(UiState& ui, ExplainUi& x, int layer);

void draw_step_map(FrameContext& f, StepMapPanel& p, ExplainUi& x);

}  // namespace kvs::gui
