// Prompt and tokens: the editable prompt, then every token as a chip coloured by what happened
// to it at the step shown (processed at the prefill, generated earlier, going in now, just
// chosen). Hovering a chip shows its position, id and piece.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

#include "core/util/format.h"
#include "gui/actions/actions.h"
#include "gui/draw/gl_textures.h"
#include "gui/draw/text.h"
#include "gui/panels/tokens.h"
#include "gui/state/strings.h"
#include "gui/views/chip_flow.h"
#include "gui/views/engine_words.h"
#include "gui/views/token_chips.h"

namespace kvs::gui {
namespace {

void legend_swatch(ImU32 c, const char* label, bool outline, ImU32 text) {
    const float fh = ImGui::GetFontSize();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(p.x, p.y + fh * 0.15f), ImVec2(p.x + fh * 0.9f, p.y + fh * 0.95f),
                      outline ? 0 : c, 3);
    if (outline)
        dl->AddRect(ImVec2(p.x, p.y + fh * 0.15f), ImVec2(p.x + fh * 0.9f, p.y + fh * 0.95f), c, 3,
                    0, 2);
    ImGui::Dummy(ImVec2(fh, fh));
    ImGui::SameLine(0, 4);
    ImGui::PushStyleColor(ImGuiCol_Text, text);
    ImGui::TextUnformatted(label);
    ImGui::PopStyleColor();
}

// The prompt's field, the chips' legend and, once generation ended, why it ended.
void draw_prompt_and_legend(FrameContext& f) {
    UiState& ui = f.ui;
    const float fh = f.font_px;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("Prompt"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-fh * 7);
    if (ImGui::InputText("##prompt", &ui.prompt, ImGuiInputTextFlags_EnterReturnsTrue))
        apply_prompt(f);
    if (ImGui::IsItemEdited()) ui.prompt_dirty = true;
    if (f.layout) {
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        f.layout->panels.emplace_back("prompt_field", Rect{a.x, a.y, b.x - a.x, b.y - a.y});
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(!ui.prompt_dirty);
    if (ImGui::Button(tr("Use prompt"), ImVec2(-1, 0))) apply_prompt(f);
    ImGui::EndDisabled();

    // Each swatch beside the last while it fits, else on the next line: never cut at the edge.
    const auto swatch_w = [&](const char* label) { return fh + 4 + text_width(label, fh); };
    legend_swatch(f.theme.chip_prompt, tr("prompt (prefill)"), false, f.theme.muted_text);
    same_line_or_wrap(swatch_w(tr("generated")), fh);
    legend_swatch(f.theme.chip_generated, tr("generated"), false, f.theme.muted_text);
    same_line_or_wrap(swatch_w(tr("going in at this step")), fh);
    legend_swatch(f.theme.chip_current, tr("going in at this step"), false, f.theme.muted_text);
    same_line_or_wrap(swatch_w(tr("chosen at this step")), fh);
    legend_swatch(f.theme.chip_chosen, tr("chosen at this step"), true, f.theme.muted_text);
    if (ui.prompt_dirty) {
        ImGui::SameLine(0, fh);
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.warning_text);
        ImGui::TextUnformatted(tr("Enter uses the edited prompt (and resets)"));
        ImGui::PopStyleColor();
    } else if (f.snap.finished()) {
        // Generation ended: say why where the tokens are, as long as it stays ended.
        const SessionView& s0 = f.snap.sessions[0];
        char b[200];
        if (s0.finish_reason == FinishReason::ContextFull && f.model())
            std::snprintf(b, sizeof b, tr("finished: the context of %d tokens is full"),
                          f.model()->config().seq_len);
        else
            std::snprintf(b, sizeof b, tr("finished: %s"), finish_reason_text(s0.finish_reason));
        // A line of its own: beside the legend it would be cut off in a narrow panel.
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.warning_text);
        ImGui::TextUnformatted(b);
        ImGui::PopStyleColor();
        if (f.layout) f.layout->finish = b;
    }
}

}  // namespace

void draw_tokens(FrameContext& f, TokensPanel& panel) {
    UiState& ui = f.ui;
    const float fh = f.font_px;
    draw_prompt_and_legend(f);

    if (f.snap.sessions.empty()) return;
    const SessionView& sv = f.snap.sessions[0];
    const auto& steps = sv.trace.steps();
    const int s = shown_step(sv, f.step);
    const int P = static_cast<int>(sv.prompt_tokens.size());

    // The sequence as it stood after step s: the prompt, then each step's chosen token; each
    // chip made when drawn (gui/views/token_chips.h).
    const int n = token_chip_count(P, s);
    auto chip = [&](int k) { return token_chip(sv.prompt_tokens, steps, s, k); };
    auto fill_of = [&](const TokenChip& c) {
        if (c.going_in) return f.theme.chip_current;
        switch (c.kind) {
            case ChipKind::Pending:
                return f.theme.chip_pending;
            case ChipKind::Prompt:
                return f.theme.chip_prompt;
            case ChipKind::Generated:
                return f.theme.chip_generated;
            case ChipKind::Chosen:
                return f.theme.chip_chosen;
        }
        return f.theme.chip_generated;
    };
    auto why = [&](const TokenChip& c) {
        char b[200];
        if (c.step < 0)
            std::snprintf(b, sizeof b, "%s",
                          s < 0 ? tr("prompt token: not processed yet (press Prefill)")
                                : tr("prompt token: processed at the prefill (step 0)"));
        else if (c.step == s)
            std::snprintf(b, sizeof b, tr("chosen at this step (%d); goes in at the next step"),
                          c.step);
        else
            std::snprintf(b, sizeof b, tr("chosen at step %d, fed in at step %d"), c.step,
                          c.step + 1);
        return c.going_in ? std::string(b) + " " + tr("(going in now)") : std::string(b);
    };
    // Each token's label and width once per frame (thousands of chips share a few hundred ids).
    std::unordered_map<int, std::pair<std::string, float>> labels;
    auto label_of = [&](int id) -> const std::pair<std::string, float>& {
        auto it = labels.find(id);
        if (it == labels.end()) {
            std::string t = f.label(id);
            const float w = ImGui::CalcTextSize(t.c_str()).x;
            it = labels.emplace(id, std::make_pair(std::move(t), w)).first;
        }
        return it->second;
    };

    ImGui::BeginChild("chips", ImVec2(0, 0), false);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float right = origin.x + ImGui::GetContentRegionAvail().x;
    const float pad = fh * 0.3f, gap = fh * 0.25f, h = fh + 2 * pad;
    const float clip_top = ImGui::GetWindowPos().y,
                clip_bottom = clip_top + ImGui::GetWindowHeight();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool window_hovered = ImGui::IsWindowHovered();
    // Where each chip goes, kept between frames (gui/views/chip_flow.h): the chips are the
    // prompt's tokens then each step's, the same in one generation, so only new ones are
    // measured; the lines in view are drawn.
    std::uint64_t key =
        texture_key({f.snap.generation, std::uint64_t(P),
                     std::uint64_t(reinterpret_cast<std::uintptr_t>(ImGui::GetFont())),
                     std::uint64_t(fh * 64)});
    for (int id : sv.prompt_tokens) key = texture_key({key, std::uint64_t(id)});
    ChipFlow& flow = panel.flow;
    reset_chip_flow(flow, key, right - origin.x, gap);
    for (int k = static_cast<int>(flow.x.size()); k < n; ++k)
        add_chip(flow, label_of(chip(k).id).second + 2 * pad);
    if (f.layout)
        for (int k = 0; k < n; ++k) f.layout->tokens.push_back(label_of(chip(k).id).first);
    const float line_h = h + gap;
    const auto [first, last] = chips_on_lines(
        flow, n, static_cast<int>(std::floor((clip_top - origin.y - h) / line_h)) - 1,
        static_cast<int>(std::floor((clip_bottom - origin.y) / line_h)) + 1);
    for (int k = first; k < last; ++k) {
        const TokenChip c = chip(k);
        const ImU32 fill = fill_of(c);
        const auto& [text, text_w] = label_of(c.id);
        const float w = text_w + 2 * pad;
        const float x = origin.x + flow.x[k], y = origin.y + flow.line[k] * line_h;
        if (y + h >= clip_top && y <= clip_bottom) {
            const ImVec2 a(x, y), b(x + w, y + h);
            if (c.kind == ChipKind::Chosen) {
                dl->AddRect(a, b, fill, 4, 0, 2.5f);
                dl->AddText(ImVec2(x + pad, y + pad), ImGui::GetColorU32(ImGuiCol_Text),
                            text.c_str());
            } else {
                dl->AddRectFilled(a, b, fill, 4);
                dl->AddText(ImVec2(x + pad, y + pad), f.theme.chip_text, text.c_str());
            }
            if (window_hovered && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y &&
                mouse.y < b.y) {
                ImGui::BeginTooltip();
                ImGui::Text(tr("position %d, token id %d"), c.pos + 1, c.id);  // positions from 1
                ImGui::Text(tr("piece: \"%s\""), f.label(c.id).c_str());
                ImGui::TextUnformatted(why(c).c_str());
                ImGui::EndTooltip();
            }
        }
    }
    const float last_y = origin.y + (n > 0 ? flow.line[n - 1] : 0) * line_h;
    ImGui::Dummy(ImVec2(right - origin.x, last_y + h - origin.y));
    // Following the newest step: keep the newest token in view.
    if (ui.view_step < 0 && n != panel.chips_drawn) ImGui::SetScrollHereY(1.0f);
    panel.chips_drawn = n;
    ImGui::EndChild();
}

}  // namespace kvs::gui
