// The F1 overlay: every key, in the window's language.
#include <imgui.h>

#include "gui/panels/help.h"
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
        const char* keys[][2] = {
            {tr("Space or Right"), tr("step: prefill first, then one decode token")},
            {"P", tr("play / pause (speed slider in the toolbar)")},
            {"R", tr("reset to the prompt")},
            {"C", tr("cache mode: on, off, compare both")},
            {tr("[ and ]  or Shift+Left/Right"), tr("scrub back / forward through the steps")},
            {"Home / End", tr("first step / newest step")},
            {tr("+ and -"), tr("text size")},
            {"T", tr("light / dark theme")},
            {"F", tr("full screen")},
            {tr("1 to 9"), tr("a panel alone in the window: 1 tokens, 2 attention, 3 KV cache, 4 "
                              "time, 5 next token, 6 toy table, 7 lesson, 8 inside attention, 9 "
                              "op strip (again, 0 or Esc: back)")},
            {tr("double-click a title"), tr("maximise that panel / restore")},
            {"F5", tr("presenter mode: hide the toolbar and the titles (F5 or Esc: back)")},
            {"Ctrl+S", tr("save a PNG of the window (current folder)")},
            {"Ctrl+E", tr("export the run: attention and steps as CSV, trace JSON, trace events "
                          "(current folder)")},
            {"L", tr("show / hide the lesson")},
            {tr("N or Page Down"), tr("lesson: next step (runs its actions)")},
            {tr("B or Page Up"), tr("lesson: step back (replays the steps before it)")},
            {tr("1 to 4, digits, Enter"),
             tr("lesson: answer the step's question before it runs (then see the engine's "
                "answer)")},
            {"I", tr("inside attention: q·Kᵀ, √d_k, mask, softmax, ×V for one row (click a "
                     "heatmap row)")},
            {tr("Up / Down"), tr("inside attention: the query row above / below")},
            {tr("S / Shift+S"), tr("inside attention: the next / previous stage of the row (q and "
                                   "K, q·k, ×1/√d_k, mask, softmax, ×V, output; then all)")},
            {"A", tr("inside attention: play the stages one after another")},
            {"M", tr("causal vs bidirectional: the same model without its causal mask beside it")},
            {"O", tr("op strip: every op of the step with shapes, FLOPs, time")},
            {tr(", and ."), tr("op strip: previous / next op (the panel follows its layer)")},
            {"W", tr("weight types: bytes per token and decode speed in f32, f16, q8_0 and q4_K, "
                     "measured")},
            {"V", tr("serving: many requests over one paged KV cache, step by step (Right: next "
                     "step, [: back, R: start again)")},
            {tr("F1 or Esc"), tr("this help")},
        };
        if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg)) {
            for (const auto& k : keys) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(k[0]);
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(k[1]);
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
