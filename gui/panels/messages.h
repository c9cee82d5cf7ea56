#pragma once
// The messages of the moment (the engine's last error, a notice, a missing font), each shown for a
// few seconds: in the toolbar in its status line's place (gui/panels/toolbar.cpp), or, without a
// toolbar, on the right of the title bar of the panel shown alone where one line fits there, else
// (presenter mode, a long message) in a strip at the bottom of the window that the stage leaves
// them while they show: over no panel's contents either way.
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
// A title bar the messages may take the right of: from x `from` (past its title) to the window's
// right edge, `top` and `height` its own.
struct TitleBarRoom {
    float from = 0, top = 0, height = 0;
};
// Whether the messages showing are one line that fits in `room`.
bool messages_fit_title_bar(FrameContext& f, const TitleBarRoom& room);
// The height of the strip the messages take at the bottom of the window when there is no toolbar
// and no title bar for them (0 when none show): the stage ends above it.
float message_strip_height(FrameContext& f);
// The messages when there is no toolbar: in `title_bar` when given, else in the strip (recorded
// for --layout-json either way).
void draw_messages(FrameContext& f, const TitleBarRoom* title_bar = nullptr);

}  // namespace kvs::gui
