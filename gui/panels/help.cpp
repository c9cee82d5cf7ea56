// The F1 overlay: every row of the shortcut table (gui/state/shortcuts.h), in the window's
// language.
#include <imgui.h>

#include "gui/panels/help.h"
#include "gui/state/shortcuts.h"
#include "gui/state/strings.h"

namespace kvs::gui {

void draw_help(FrameContext& f) {
    if (!f.ui.show_help) return;
    const ImVec2 vp = ImGui::GetMainViewport()->Size;
    ImGui::SetNextWindowPos(ImVec2(vp.x * 0.5f, vp.y * 0.5f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowBgAlpha(0.96f);
    const std::string title = std::string(tr("Keys")) + "###keys";
    if (ImGui::Begin(title.c_str(), &f.ui.show_help,
                     ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                         ImGuiWindowFlags_NoSavedSettings)) {
        if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg)) {
            for (const Shortcut& k : shortcuts()) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(tr(k.keys));
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(tr(k.what));
            }
            ImGui::EndTable();
        }
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        ImGui::TextUnformatted(tr("Keys are ignored while a text field has the focus."));
        // The one indexing convention of the window, the CLI, the lessons and the trace JSON.
        ImGui::TextWrapped(
            "%s",
            tr("Numbering: positions count from 1 (the first prompt token is at position 1) and "
               "a query row is named by its position; layers, heads, K/V heads and steps "
               "count from 0 (step 0 is the prefill)."));
        ImGui::PopStyleColor();
    }
    ImGui::End();
}

}  // namespace kvs::gui
