#pragma once
// The messages of the moment (the engine's last error, a notice, a missing font), each shown for a
// few seconds: in the toolbar in its status line's place (gui/panels/toolbar.cpp), or, without a
// toolbar (a panel alone, presenter mode), in a strip at the bottom of the window that the stage
// leaves them while they show, over no panel.
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
// The height of the strip the messages take at the bottom of the window when there is no toolbar
// (0 when none show): the stage ends above it.
float message_strip_height(FrameContext& f);
// The messages in that strip when there is no toolbar (recorded for --layout-json either way).
void draw_messages(FrameContext& f);

}  // namespace kvs::gui
