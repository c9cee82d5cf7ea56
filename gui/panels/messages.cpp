// The messages of the moment: the engine's last error, a notice, a font that is missing.
#include "gui/panels/messages.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "lessonlib/engine_messages.h"

namespace kvs::gui {

std::vector<MessageLine> message_lines(FrameContext& f) {
    const double now = ImGui::GetTime();
    using Line = MessageLine;
    std::vector<Line> lines;
    if (!f.snap.error.empty() && now < f.ui.error_until)
        lines.push_back(
            {f.theme.error_text, f.snap.error_task == EngineTask::None
                                     ? engine_message(f.snap.error, report_lang(f.ui.lang))
                                     : std::string(tr(failure_words(f.snap.error_task))) +
                                           (f.ui.lang == Lang::Zh ? "：" : ": ") +
                                           engine_message(f.snap.error, report_lang(f.ui.lang))});
    if (!f.ui.notice.empty() && now < f.ui.notice_until)
        lines.push_back({f.theme.ok_text, f.ui.notice});
    if (!f.ui.font_notice.empty() && now < f.ui.font_notice_until)
        lines.push_back(
            {f.theme.warning_text, engine_message(f.ui.font_notice, report_lang(f.ui.lang))});
    for (Line& l : lines) l.text = FrameContext::drawable(l.text);
    return lines;
}

namespace {

constexpr float kMargin = 4;  // between the strip's box and the window's bottom edge
constexpr float kGap = 2;     // between the stage's last panel and the box

// Where the lines wrap: at most 78% of the window's width, as wide as the longest line.
float wrap_width(float window_w) {
    return window_w * 0.78f - ImGui::GetStyle().WindowPadding.x;
}

// The box the lines take: [w, h] with the window padding around them.
ImVec2 box_size(const std::vector<MessageLine>& lines, float window_w) {
    const ImGuiStyle& st = ImGui::GetStyle();
    float w = 0, h = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const ImVec2 t =
            ImGui::CalcTextSize(lines[i].text.c_str(), nullptr, false, wrap_width(window_w));
        w = std::max(w, t.x);
        h += t.y + (i > 0 ? st.ItemSpacing.y : 0);
    }
    return ImVec2(std::ceil(w + 2 * st.WindowPadding.x),
                  std::ceil(std::max(h + 2 * st.WindowPadding.y, st.WindowMinSize.y)));
}

}  // namespace

bool messages_fit_title_bar(FrameContext& f, const TitleBarRoom& room) {
    const auto lines = message_lines(f);
    if (lines.size() != 1) return false;
    const float pad = ImGui::GetStyle().WindowPadding.x;
    const ImVec2 t = ImGui::CalcTextSize(lines[0].text.c_str());
    return t.y <= room.height &&
           room.from + t.x + 2 * pad + kMargin <= ImGui::GetMainViewport()->Size.x;
}

float message_strip_height(FrameContext& f) {
    const auto lines = message_lines(f);
    if (lines.empty()) return 0;
    return box_size(lines, ImGui::GetMainViewport()->Size.x).y + kMargin + kGap;
}

void draw_messages(FrameContext& f, const TitleBarRoom* title_bar) {
    // Errors, notices and missing fonts show for a few seconds in the toolbar, in its status
    // line's place. Without a toolbar (a panel alone, presenter mode) they show on the right of
    // the panel's title bar, or in a strip at the bottom of the window, below the stage
    // (App::draw_panels leaves it the strip's height, message_strip_height): over no panel's
    // contents.
    const auto lines = message_lines(f);
    if (f.layout)
        for (const MessageLine& l : lines) f.layout->messages.push_back(l.text);
    if (lines.empty() || f.toolbar_bottom > 0) return;
    using Line = MessageLine;
    const ImVec2 vp = ImGui::GetMainViewport()->Size;
    int pushed = 0;
    if (title_bar) {
        // One line, as tall as the title bar, ending a margin before the window's right edge.
        const ImGuiStyle& st = ImGui::GetStyle();
        const ImVec2 t = ImGui::CalcTextSize(lines[0].text.c_str());
        const float pad_y = (title_bar->height - t.y) * 0.5f;
        ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(st.WindowPadding.x, pad_y));
        ImGui::PushStyleVar(ImGuiStyleVar_WindowMinSize, ImVec2(1, 1));
        pushed = 2;
        ImGui::SetNextWindowPos(ImVec2(vp.x - kMargin, title_bar->top), ImGuiCond_Always,
                                ImVec2(1.0f, 0.0f));
        ImGui::SetNextWindowSize(ImVec2(std::ceil(t.x + 2 * st.WindowPadding.x), title_bar->height),
                                 ImGuiCond_Always);
    } else {
        ImGui::SetNextWindowPos(ImVec2(vp.x * 0.5f, vp.y - kMargin), ImGuiCond_Always,
                                ImVec2(0.5f, 1.0f));
        ImGui::SetNextWindowSize(box_size(lines, vp.x), ImGuiCond_Always);
    }
    ImGui::SetNextWindowBgAlpha(0.97f);
    ImGui::Begin("##messages", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoInputs |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                     ImGuiWindowFlags_NoNav);
    for (const Line& l : lines) {
        ImGui::PushStyleColor(ImGuiCol_Text, l.colour);
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap_width(vp.x));
        ImGui::TextUnformatted(l.text.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
    }
    ImGui::End();
    ImGui::PopStyleVar(pushed);
}

}  // namespace kvs::gui
