#pragma once
// Text as the panels place it: on the current window's draw list at a point (recorded for
// --layout-json with every other text, gui/draw/text_record.h), wrapped at word boundaries, cut
// to a width, and a row of controls that wraps instead of running off a narrow panel.
#include <imgui.h>

#include <string>
#include <vector>

namespace kvs::gui {

// Draws `text` at `p` in the current window's draw list; `size` 0: the current font size.
void put_text(ImVec2 p, ImU32 col, const std::string& text, float size = 0);
// put_text wrapped at word boundaries to `width`, one line per put_text; returns the height used.
float put_wrapped(ImVec2 p, ImU32 col, const std::string& text, float width);
// The height put_wrapped would take.
float wrapped_height(const std::string& text, float width);
// The lines put_wrapped would draw.
std::vector<std::string> wrapped_lines(const std::string& text, float width);

// SameLine when an item `w` wide still fits on the line, else the next line (a narrow panel or
// large text wraps a row of controls instead of cutting it off, or drawing text under one).
void same_line_or_wrap(float w, float spacing = -1);
// The width of `s` in pixels in the current font at text height `px`.
float text_width(const std::string& s, float px);
// `s` cut to whole characters and ".." when wider than max_w pixels in the current font, at text
// height `px` (0: the current font size).
std::string clipped(const std::string& s, float max_w, float px = 0);

}  // namespace kvs::gui
