// The toy example's table, as the tutorial prints it: one row per token, one column per head,
// each head's scalar output (StepRecord::head_outputs) at that token; "none" where the head had
// no key to attend to. Filled from the step that computed each row.
#include <imgui.h>

#include <cmath>
#include <cstdio>

#include "core/model/toy_model.h"
#include "core/tokenizers/toy_vocabulary.h"
#include "core/util/format.h"
#include "gui/draw/text.h"
#include "gui/panels/toy.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"

namespace kvs::gui {

void draw_toy_table(FrameContext& f) {
    const Model* model = f.model();
    if (!model || f.snap.sessions.empty()) return;
    const SessionView& sv = f.snap.sessions[0];
    const int s = shown_step(sv, f.step);
    const ModelConfig& c = model->config();
    if (s < 0) {
        ImGui::TextWrapped("%s",
                           tr("Each head's output per token appears here after the prefill."));
        return;
    }
    std::vector<int> tokens = sv.prompt_tokens;
    for (const auto& r : sv.trace.steps()) tokens.push_back(r.token_out);
    const int n = sv.trace.steps()[s].kv.len;
    const int cols = c.n_layers * c.n_heads;
    // The toy's tokens carry a value each (what V holds): the heads' outputs are averages of
    // these, checkable on screen.
    const bool values = model->is_toy();
    auto value_of = [&](int id) -> float {
        const auto vocab = toy_vocabulary();
        return id >= 0 && id < static_cast<int>(vocab.size()) ? vocab[id].value : NAN;
    };
    if (ImGui::BeginTable("toy", 2 + (values ? 1 : 0) + cols,
                          ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                              ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchSame,
                          ImVec2(0, ImGui::GetContentRegionAvail().y - f.font_px * 1.5f))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn(tr("position"));
        ImGui::TableSetupColumn(tr("token"));
        if (values) ImGui::TableSetupColumn(tr("value (V)"));
        for (int l = 0; l < c.n_layers; ++l)
            for (int h = 0; h < c.n_heads; ++h) {
                char b[40];
                // The toy's heads have names (its rules); a real model's only numbers.
                if (model->is_toy())
                    std::snprintf(b, sizeof b, "%s", toy_head_name(h));
                else if (c.n_layers > 1)
                    std::snprintf(b, sizeof b, tr("L%d head %d"), l, h);
                else
                    std::snprintf(b, sizeof b, tr("head %d"), h);
                ImGui::TableSetupColumn(b);
            }
        ImGui::TableHeadersRow();
        for (int p = 0; p < n; ++p) {
            // The step whose rows include position p.
            const StepRecord* from = nullptr;
            int row = 0;
            for (int k = 0; k <= s && !from; ++k) {
                const StepRecord& r = sv.trace.steps()[k];
                const int rows = r.attention.rows;
                const int q0 = r.attention.q_pos0;
                if (rows > 0 && p >= q0 && p < q0 + rows &&
                    r.head_outputs.size() == std::size_t(cols) * rows) {
                    from = &r;
                    row = p - q0;
                }
            }
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            // Positions from 1, as the tutorial and `kvscope-cli toy` number them.
            ImGui::Text("%d", p + 1);
            ImGui::TableNextColumn();
            const int id = p < static_cast<int>(tokens.size()) ? tokens[p] : -1;
            ImGui::TextUnformatted(f.label(id).c_str());
            if (values) {
                ImGui::TableNextColumn();
                ImGui::Text("%g", value_of(id));
            }
            for (int l = 0; l < c.n_layers; ++l)
                for (int h = 0; h < c.n_heads; ++h) {
                    ImGui::TableNextColumn();
                    if (!from) {
                        ImGui::TextDisabled("-");
                        continue;
                    }
                    const int rows = from->attention.rows;
                    const float v =
                        from->head_outputs[(std::size_t(l) * c.n_heads + h) * rows + row];
                    if (!std::isfinite(v) || from->attention.is_empty_row(l, h, row))
                        ImGui::TextDisabled("%s", tr("none"));
                    else
                        ImGui::Text("%.4g", v);
                }
        }
        ImGui::EndTable();
    }
    // The context vector: the last row, the four heads' outputs that the projection turns into
    // the next token's logits.
    if (values && n > 0) {
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        ImGui::TextWrapped(tr("context vector = the last row (position %d): logit(word) = "
                              "projection(word) . context"),
                           n);
        ImGui::PopStyleColor();
    }
}

}  // namespace kvs::gui
