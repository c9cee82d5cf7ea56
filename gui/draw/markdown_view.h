#pragma once
// Draws parsed Markdown (gui/views/markdown.h) into the current ImGui window at its width: text
// wraps between words and between Chinese characters (never before closing punctuation), **bold**
// is in the bold font (Chinese, which it lacks, is drawn twice, a fraction of a pixel apart),
// *italic* is slanted, `code` is in the mono font on a tinted box, lists are indented with their
// markers, tables are ImGui tables with wrapped cells.
#include <imgui.h>

#include <vector>

#include "gui/views/markdown.h"

namespace kvs::gui {

struct MdStyle {
    ImFont* mono = nullptr;  // for code; null: the current font
    ImFont* bold =
        nullptr;  // for bold text without Chinese; null: drawn twice, a fraction of a pixel apart
    ImU32 text = 0, heading = 0, muted = 0, code_bg = 0;
};

void draw_markdown(const std::vector<MdBlock>& blocks, const MdStyle& style);
// One line of spans at the cursor, wrapped at `width`, in `colour`; advances the cursor.
// `scale` enlarges the text (titles).
void draw_md_line(const MdLine& line, const MdStyle& style, float width, ImU32 colour,
                  float scale = 1.0f, bool bold = false);

}  // namespace kvs::gui
