#pragma once
// Light and dark looks: ImGui's style plus the colours our panels draw with.
#include <imgui.h>

#include "gui/views/colormap.h"

namespace kvs::gui {

struct ThemeColours {
    bool dark = true;
    ImU32 chip_prompt, chip_generated, chip_current, chip_chosen, chip_pending, chip_text;
    ImU32 series[2];     // with the cache, without it
    ImU32 series_other;  // counted only (the mode that did not run)
    ImU32 axis, grid, muted_text, error_text, warning_text, ok_text, marker;
    ImU32 panel_bg;
    // The window is cleared to this colour and panels leave their backgrounds undrawn: with
    // llvmpipe every drawn pixel costs a texture fetch and a blend, and the panels tile the
    // whole window, so drawing their backgrounds would be most of a frame's work.
    ImVec4 clear;
};

// Applies the ImGui style for `dark` at `scale` and returns our colours.
ThemeColours apply_theme(bool dark, float scale);
ImU32 to_u32(const Rgba& c);

}  // namespace kvs::gui
