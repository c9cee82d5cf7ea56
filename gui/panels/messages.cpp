// The messages of the moment: the engine's last error, a notice, a font that is missing.
#include "gui/panels/messages.h"

#include <imgui.h>

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

void draw_messages(FrameContext& f) {
    // Errors, notices and missing fonts show for a few seconds in the toolbar, in its status
    // line's place. Without a toolbar (a panel alone, presenter mode) they float at the bottom
    // of the window, over the end of a panel's contents, never over a title or a tab.
    const auto lines = message_lines(f);
    if (f.layout)
        for (const MessageLine& l : lines) f.layout->messages.push_back(l.text);
    if (lines.empty() || f.toolbar_bottom > 0) return;
    using Line = MessageLine;
    const ImVec2 vp = ImGui::GetMainViewport()->Size;
    ImGui::SetNextWindowPos(ImVec2(vp.x * 0.5f, vp.y - 4), ImGuiCond_Always, ImVec2(0.5f, 1.0f));
    ImGui::SetNextWindowBgAlpha(0.97f);
    ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(vp.x * 0.8f, vp.y * 0.5f));
    ImGui::Begin("##messages", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                     ImGuiWindowFlags_NoInputs | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav);
    for (const Line& l : lines) {
        ImGui::PushStyleColor(ImGuiCol_Text, l.colour);
        ImGui::PushTextWrapPos(vp.x * 0.78f);
        ImGui::TextUnformatted(l.text.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
    }
    ImGui::End();
}

}  // namespace kvs::gui
