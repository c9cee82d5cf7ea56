// Next token: the most likely next tokens after the step shown (StepRecord::top, softmax at
// temperature 1), the token chosen, the random draw when sampling, and the sampler's controls.
// In compare mode also what the run without the cache chose and how far its logits differ.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/format.h"
#include "gui/panels.h"

namespace kvs::gui {
namespace {

SamplerConfig sampler_from(const Settings& s) {
    SamplerConfig c;
    c.temperature = s.temperature;
    c.top_k = s.top_k;
    c.top_p = s.top_p;
    c.seed = s.seed;
    return c;
}

void sampler_controls(FrameContext& f) {
    Settings& st = f.ui.settings;
    const float fh = f.font_px;
    bool apply = false;
    ImGui::SetNextItemWidth(fh * 7);
    ImGui::SliderFloat(tr("temperature"), &st.temperature, 0.0f, 2.0f,
                       st.temperature == 0 ? tr("0 (greedy)") : "%.2f");
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 5);
    ImGui::SliderFloat("top-p", &st.top_p, 0.0f, 1.0f, "%.2f");
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    ImGui::SetNextItemWidth(fh * 7);
    ImGui::InputInt(tr("top-k (0 off)"), &st.top_k);
    st.top_k = std::max(0, st.top_k);
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    ImGui::SameLine();
    int seed = static_cast<int>(st.seed & 0x7fffffff);
    ImGui::SetNextItemWidth(fh * 6);
    if (ImGui::InputInt(tr("seed"), &seed)) st.seed = static_cast<std::uint64_t>(std::max(0, seed));
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    if (apply) {
        f.worker.set_sampler(sampler_from(st));
        f.ui.notice = tr("sampler set (its random stream restarts from the seed)");
        f.ui.notice_until = ImGui::GetTime() + 3;
    }
}

}  // namespace

void draw_next_token(FrameContext& f) {
    const float fh = f.font_px;
    if (f.snap.sessions.empty()) return;
    const SessionView& s0 = f.snap.sessions[0];
    const int s = shown_step(s0, f.step);
    sampler_controls(f);
    ImGui::Separator();
    if (s < 0) {
        ImGui::TextWrapped("%s", tr("The next-token distribution appears after the prefill."));
        return;
    }
    const StepRecord& r = s0.trace.steps()[s];
    const SamplerConfig& sc = f.snap.sampler;
    ImGui::Text(tr("Step %d chose \"%s\" (id %d)"), s, f.label(r.token_out).c_str(), r.token_out);
    ImGui::SameLine(0, fh);
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    if (r.coin >= 0)
        ImGui::Text(tr("random draw %.4f (temperature %.2f, top-k %d, top-p %.2f, seed %llu)"),
                    r.coin, sc.temperature, sc.top_k, sc.top_p,
                    static_cast<unsigned long long>(sc.seed));
    else
        ImGui::TextUnformatted(tr("greedy: the most likely token"));
    ImGui::PopStyleColor();
    if (f.snap.sessions.size() > 1) {
        const SessionView& s1 = f.snap.sessions[1];
        const int s1s = shown_step(s1, f.step);
        if (s1s == s) {
            const StepRecord& u = s1.trace.steps()[s1s];
            const double d =
                s < static_cast<int>(f.snap.logit_max_diff.size()) ? f.snap.logit_max_diff[s] : NAN;
            char db[32] = "n/a";
            if (std::isfinite(d)) std::snprintf(db, sizeof db, "%.3g", d);
            ImGui::Text(tr("without cache: \"%s\"; largest |logit difference| %s"),
                        f.label(u.token_out).c_str(), db);
        } else {
            ImGui::TextUnformatted(tr("without cache: still replaying..."));
        }
    }

    // Bars: probability at temperature 1, then the logit it came from; the chosen token
    // outlined. A header names the columns.
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    ImGui::TextWrapped("%s", tr("most likely next tokens (softmax of the logits, temperature 1):"));
    ImGui::PopStyleColor();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 avail0 = ImGui::GetContentRegionAvail();
    const float lab_w = fh * 6, pct_w = fh * 3.6f, logit_w = fh * 4.2f;
    const float bar_w = std::max(fh, avail0.x - lab_w - pct_w - logit_w);
    {
        const ImVec2 h = ImGui::GetCursorScreenPos();
        const ImU32 muted = f.theme.muted_text;
        dl->AddText(h, muted, tr("token"));
        dl->AddText(ImVec2(h.x + lab_w, h.y), muted, tr("probability"));
        const char* lg = tr("logit");
        dl->AddText(ImVec2(h.x + avail0.x - ImGui::CalcTextSize(lg).x, h.y), muted, lg);
        ImGui::Dummy(ImVec2(avail0.x, fh * 1.1f));
    }
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // As many of the recorded top tokens as fit at a readable size (the toy: its whole
    // vocabulary of ten).
    const float row_h = fh * 1.2f;
    const int n =
        std::min(static_cast<int>(r.top.size()), std::max(1, static_cast<int>(avail.y / row_h)));
    for (int i = 0; i < n; ++i) {
        const TopToken& t = r.top[i];
        const float y = o.y + i * row_h;
        if (y + row_h > o.y + avail.y + 1) break;
        const bool chosen = t.id == r.token_out;
        std::string lab = f.label(t.id);
        dl->AddText(ImVec2(o.x, y + (row_h - fh) * 0.5f),
                    chosen ? ImGui::GetColorU32(ImGuiCol_Text) : f.theme.muted_text, lab.c_str());
        // Weights that are NaN (a broken model file) give NaN probabilities: no bar, "n/a".
        const bool known = std::isfinite(t.prob);
        const float w = bar_w * (known ? std::clamp(t.prob, 0.0f, 1.0f) : 0.0f);
        dl->AddRectFilled(ImVec2(o.x + lab_w, y + row_h * 0.12f),
                          ImVec2(o.x + lab_w + std::max(w, 1.0f), y + row_h * 0.88f),
                          chosen ? f.theme.chip_chosen : f.theme.series[0], 2);
        char pct[24];
        if (known)
            std::snprintf(pct, sizeof pct, "%.1f%%", 100.0f * t.prob);
        else
            std::snprintf(pct, sizeof pct, "n/a");
        dl->AddText(ImVec2(o.x + lab_w + std::max(w, 1.0f) + 4, y + (row_h - fh) * 0.5f),
                    f.theme.muted_text, pct);
        char lg[24];
        std::snprintf(lg, sizeof lg, "%.2f", t.logit);
        dl->AddText(ImVec2(o.x + avail.x - ImGui::CalcTextSize(lg).x, y + (row_h - fh) * 0.5f),
                    f.theme.muted_text, lg);
    }
    ImGui::Dummy(ImVec2(avail.x, std::min(avail.y, n * row_h)));
}

}  // namespace kvs::gui
