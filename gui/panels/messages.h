#pragma once
// The messages of the moment (the engine's last error, a notice, a missing font), each shown for a
// few seconds: in the toolbar in its status line's place (gui/panels/toolbar.cpp), or, without a
// toolbar (a panel alone, presenter mode), floating at the bottom of the window over no title or
// tab.
#include <imgui.h>

#include <string>
#include <vector>

#include "gui/draw/frame_context.h"

namespace kvs::gui {

struct MessageLine {
    ImU32 colour;
    std::string text;
};
// The messages showing now, each in the window's language and drawable in its font.
std::vector<MessageLine> message_lines(FrameContext& f);
// The messages floating at the bottom of the window when there is no toolbar (recorded for
// --layout-json either way).
void draw_messages(FrameContext& f);

}  // namespace kvs::gui
