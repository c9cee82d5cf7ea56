#pragma once
// Every piece of text a frame drew, read back from ImGui's draw data after ImGui::Render(): the
// glyph quads of the font atlas, joined into runs (one line of one text item), each with the
// characters, its rectangle and whether its clip rectangle (its panel, a table cell, a child
// window) cut it. Nothing draws text past it: widgets, tables, plots and panels' own AddText all
// end up as glyph quads, so a new panel is covered without doing anything.
#include "gui/views/layout_record.h"

namespace kvs::gui {

// Appends the text of the frame just rendered to `rec.texts`. Call after ImGui::Render().
void record_text(LayoutRecord& rec);

}  // namespace kvs::gui
