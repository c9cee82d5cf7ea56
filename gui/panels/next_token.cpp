// Next token: the step's choice as stages, as Inside attention builds a row: the logits, ÷ the
// temperature, the softmax at it, top-k, top-p (the distribution the draw indexes), a row per
// token and the rest's mass under each stage, then the draw as a strip of the final
// distribution's cumulative mass with the coin marked. Greedy (temperature 0) has no stages: the
// most likely tokens at temperature 1, the largest taken. Settings changed here (the controls, the
// keys) reshape the step's kept logits through core's sampling_stages at once, as a preview.
// In compare mode also what the run without the cache chose and how far its logits differ.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/util/format.h"
#include "gui/draw/text.h"
#include "gui/panels/next_token.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "gui/views/sampling_view.h"

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

void apply_sampler(FrameContext& f) {
    f.worker.set_sampler(sampler_from(f.ui.settings));
    f.ui.notice = tr("sampler set (its random stream restarts from the seed)");
    f.ui.notice_until = ImGui::GetTime() + 3;
}

void sampler_controls(FrameContext& f) {
    Settings& st = f.ui.settings;
    const float fh = f.font_px;
    bool apply = false;
    ImGui::SetNextItemWidth(fh * 7);
    ImGui::SliderFloat(tr("temperature"), &st.temperature, 0.0f, 2.0f,
                       st.temperature == 0 ? tr("0 (greedy)") : "%.2f");
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    same_line_or_wrap(fh * 5 + text_width("top-p", fh) + fh);
    ImGui::SetNextItemWidth(fh * 5);
    ImGui::SliderFloat("top-p", &st.top_p, 0.0f, 1.0f, "%.2f");
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    ImGui::SetNextItemWidth(fh * 7);
    ImGui::InputInt(tr("top-k (0 off)"), &st.top_k);
    st.top_k = std::max(0, st.top_k);
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    same_line_or_wrap(fh * 6 + text_width(tr("seed"), fh) + fh);
    int seed = static_cast<int>(st.seed & 0x7fffffff);
    ImGui::SetNextItemWidth(fh * 6);
    if (ImGui::InputInt(tr("seed"), &seed)) st.seed = static_cast<std::uint64_t>(std::max(0, seed));
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    if (apply) apply_sampler(f);
}

// The same shaping: greedy ignores top-k and top-p.
bool same_shaping(const SamplerConfig& a, const SamplerConfig& b) {
    if (a.temperature == 0 || b.temperature == 0) return a.temperature == b.temperature;
    return a.temperature == b.temperature && a.top_k == b.top_k && a.top_p == b.top_p;
}

// Greedy: the recorded most likely tokens at temperature 1, the chosen one outlined, in one
// column or two.
void draw_top_table(FrameContext& f, const StepRecord& r) {
    const float fh = f.font_px;
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    const char* heading = tr("most likely next tokens (softmax of the logits, temperature 1):");
    if (text_width(heading, fh) > ImGui::GetContentRegionAvail().x)
        heading = tr("softmax of the logits, temperature 1:");
    ImGui::TextWrapped("%s", heading);
    ImGui::PopStyleColor();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const int total = static_cast<int>(r.top.size());
    const float row_h = fh * 1.1f, head_h = fh * 1.05f, gap = fh * 0.8f;
    const int fit = std::max(1, static_cast<int>((avail.y - head_h) / row_h));
    // The label column holds its header too: short pieces (" g", "ar") would leave "token"
    // running into "probability".
    float lab_need = std::max(fh * 2, text_width(tr("token"), fh) + fh * 0.5f);
    float logit_need = text_width(tr("logit"), fh);
    for (const TopToken& t : r.top) {
        lab_need = std::max(lab_need, text_width(f.label(t.id), fh) + fh * 0.5f);
        logit_need = std::max(logit_need, text_width(logit_text(t.logit), fh));
    }
    const float lab_w = std::min(fh * 6, lab_need), logit_w = logit_need + fh * 0.4f;
    const float pct_w = text_width("100.0%", fh) + fh * 0.3f;
    const float min_col_w = lab_w + pct_w + logit_w + fh * 0.5f;
    const int cols = total > fit && avail.x >= 2 * min_col_w + gap ? 2 : 1;
    const int per_col = cols == 2 ? (total + 1) / 2 : total;
    const int rows_shown = std::min(per_col, fit);
    const float col_w = cols == 2 ? (avail.x - gap) * 0.5f : avail.x;
    // Bars beside the numbers while a column has room for a bar of 3 text heights; else each
    // bar runs under its row's numbers.
    const float bar_w = col_w - lab_w - pct_w - logit_w;
    const bool bars_under = bar_w < fh * 3;
    const ImU32 muted = f.theme.muted_text;
    for (int c = 0; c < cols; ++c) {
        const float x = o.x + c * (col_w + gap);
        dl->AddText(ImVec2(x, o.y), muted, tr("token"));
        dl->AddText(ImVec2(x + lab_w, o.y), muted,
                    clipped(tr("probability"), col_w - lab_w - logit_w).c_str());
        const char* lg = tr("logit");
        dl->AddText(ImVec2(x + col_w - ImGui::CalcTextSize(lg).x, o.y), muted, lg);
    }
    const float y0 = o.y + head_h;
    int drawn = 0;
    for (int i = 0; i < total; ++i) {
        const int c = i / per_col, k = i % per_col;
        if (c >= cols || k >= rows_shown) continue;
        ++drawn;
        const TopToken& t = r.top[i];
        const float x = o.x + c * (col_w + gap), y = y0 + k * row_h;
        const float ty = y + (row_h - fh) * 0.5f;
        const bool chosen = t.id == r.token_out;
        dl->AddText(ImVec2(x, ty), chosen ? ImGui::GetColorU32(ImGuiCol_Text) : muted,
                    clipped(f.label(t.id), lab_w - fh * 0.3f).c_str());
        // Weights that are NaN (a broken model file) give NaN probabilities: no bar, "n/a".
        const float p = std::isfinite(t.prob) ? std::clamp(t.prob, 0.0f, 1.0f) : 0.0f;
        const ImU32 bar_col = chosen ? f.theme.chip_chosen : f.theme.series[0];
        // One decimal, as the toy's ten always were (0.0% for the least likely).
        char pct_b[24] = "n/a";
        if (std::isfinite(t.prob)) std::snprintf(pct_b, sizeof pct_b, "%.1f%%", 100.0f * t.prob);
        const std::string pct = pct_b;
        if (bars_under) {
            const float span = col_w - lab_w;
            dl->AddRectFilled(ImVec2(x + lab_w, y + row_h - fh * 0.2f),
                              ImVec2(x + lab_w + std::max(span * p, 1.0f), y + row_h - fh * 0.05f),
                              bar_col, 1);
            dl->AddText(ImVec2(x + lab_w, ty), muted, pct.c_str());
        } else {
            const float w = bar_w * p;
            dl->AddRectFilled(ImVec2(x + lab_w, y + row_h * 0.12f),
                              ImVec2(x + lab_w + std::max(w, 1.0f), y + row_h * 0.88f), bar_col, 2);
            dl->AddText(ImVec2(x + lab_w + std::max(w, 1.0f) + 4, ty), muted, pct.c_str());
        }
        const std::string lg = logit_text(t.logit);
        dl->AddText(ImVec2(x + col_w - ImGui::CalcTextSize(lg.c_str()).x, ty), muted, lg.c_str());
    }
    if (f.layout) f.layout->next_tokens_shown = drawn;
    ImGui::Dummy(ImVec2(avail.x, std::min(avail.y, head_h + rows_shown * row_h)));
}

// The lines above the stages: what the step chose and how, and the other session's choice.
void draw_choice_lines(FrameContext& f, const StepRecord& r, int s) {
    const float fh = f.font_px;
    const SamplerConfig& sc = f.snap.sampler;
    ImGui::Text(tr("Step %d chose \"%s\" (id %d)"), s, f.label(r.token_out).c_str(), r.token_out);
    ImGui::SameLine(0, fh);
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    // The sampler as the command line names it (llama.cpp's names), for the steps to come.
    char opts[160];
    std::snprintf(opts, sizeof opts, "--temperature %g --top-k %d --top-p %g --seed %llu",
                  static_cast<double>(sc.temperature), sc.top_k, static_cast<double>(sc.top_p),
                  static_cast<unsigned long long>(sc.seed));
    const std::string line = std::string(tr("sampler:")) + " " + opts;
    same_line_or_wrap(text_width(line, fh));
    ImGui::TextUnformatted(line.c_str());
    ImGui::PopStyleColor();
    if (f.snap.sessions.size() < 2) return;
    const SessionView& s1 = f.snap.sessions[1];
    const int s1s = shown_step(s1, f.step);
    if (s1s != s) {
        ImGui::TextUnformatted(tr("without cache: still replaying..."));
        return;
    }
    const StepRecord& u = s1.trace.steps()[s1s];
    const double d =
        s < static_cast<int>(f.snap.logit_max_diff.size()) ? f.snap.logit_max_diff[s] : NAN;
    char db[32] = "n/a";
    if (std::isfinite(d)) std::snprintf(db, sizeof db, "%.3g", d);
    if (u.mask == AttentionMask::Bidirectional && !u.top.empty())
        // It takes the causal session's tokens; its own choice would have been this.
        ImGui::TextWrapped(tr("bidirectional: its own most likely token \"%s\" (it "
                              "takes the causal one's); largest |logit difference| %s"),
                           f.label(u.top[0].id).c_str(), db);
    else
        ImGui::Text(tr("without cache: \"%s\"; largest |logit difference| %s"),
                    f.label(u.token_out).c_str(), db);
}

}  // namespace

void nudge_sampler(FrameContext& f, SamplerKnob knob, bool down) {
    Settings& st = f.ui.settings;
    const float sign = down ? -1.0f : 1.0f;
    switch (knob) {
        case SamplerKnob::Temperature:
            // In tenths, so that repeated presses land on 1.0 and 2.0 exactly.
            st.temperature = std::clamp(std::round(st.temperature * 10 + sign) / 10.0f, 0.0f, 2.0f);
            break;
        case SamplerKnob::TopK:
            st.top_k = std::max(0, st.top_k + (down ? -1 : 1));
            break;
        case SamplerKnob::TopP:
            st.top_p = std::clamp(std::round(st.top_p * 20 + sign) / 20.0f, 0.0f, 1.0f);
            break;
    }
    apply_sampler(f);
}

void draw_next_token(FrameContext& f, NextTokenPanel& p) {
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
    draw_choice_lines(f, r, s);
    // What the draw used (the record's own settings; an older trace: the engine's now), and
    // what the controls say: when they differ, the controls' shaping of the same logits.
    SamplerConfig used = f.snap.sampler;
    if (r.sampling.vocab > 0) {
        used.temperature = r.sampling.temperature;
        used.top_k = r.sampling.top_k;
        used.top_p = r.sampling.top_p;
    }
    const SamplerConfig want = sampler_from(f.ui.settings);
    const bool preview = !same_shaping(used, want);
    const SamplerConfig& shown = preview ? want : used;
    if (shown.temperature == 0) {
        if (preview) {
            ImGui::PushStyleColor(ImGuiCol_Text, f.theme.warning_text);
            ImGui::TextWrapped("%s", tr("preview: greedy takes the largest logit (the step "
                                        "shown was drawn at other settings)"));
            ImGui::PopStyleColor();
        }
        draw_top_table(f, r);
        return;
    }
    draw_sampling_stages(f, p, r, s, shown, preview);
}

}  // namespace kvs::gui
