// The Next token panel's stages: a column per stage (gui/views/sampling_view.h), a row per token
// with a bar for each probability, the rest's mass under each stage, and the draw's strip: the
// final distribution's tokens side by side as the coin walks them, the coin marked.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "gui/draw/text.h"
#include "gui/panels/next_token.h"
#include "gui/state/strings.h"
#include "gui/views/sampling_view.h"

namespace kvs::gui {
namespace {

// The rule line a stage at a time: it wraps before an arrow, between stages, and inside a stage
// only where the stage alone is wider than the panel.
void rule_line(const std::string& rule, float fh) {
    const std::string arrow = "→";
    for (std::size_t start = 0; start < rule.size();) {
        const std::size_t next = rule.find(arrow, start + arrow.size());
        const std::string piece = rule.substr(start, next - start);
        if (start > 0) {
            ImGui::SameLine(0, 0);
            if (ImGui::GetContentRegionAvail().x < text_width(piece, fh)) ImGui::NewLine();
        }
        ImGui::TextWrapped("%s", piece.c_str());
        start = next;
    }
}

// The stages to draw, made again only when what they come from changed. Without the step's
// logits (dropped by the trace budget) only the draw's own record is there.
const SamplingStages* stages_for(FrameContext& f, NextTokenPanel& p, const StepRecord& r, int step,
                                 const SamplerConfig& shown, bool preview, int entries) {
    const float coin = preview ? -1.0f : r.sampling.vocab > 0 ? r.sampling.coin : r.coin;
    if (r.logits.empty()) return preview || r.sampling.vocab == 0 ? nullptr : &r.sampling;
    if (p.generation != f.snap.generation || p.step != step || p.logits != r.logits.data() ||
        !(p.config.temperature == shown.temperature && p.config.top_k == shown.top_k &&
          p.config.top_p == shown.top_p) ||
        p.coin != coin || p.entries != entries) {
        p.stages = sampling_stages(r.logits, shown, coin, entries);
        p.stages.forced = !preview && r.sampling.forced;
        p.generation = f.snap.generation;
        p.step = step;
        p.logits = r.logits.data();
        p.config = shown;
        p.coin = coin;
        p.entries = entries;
    }
    return &p.stages;
}

struct Geometry {
    float lab_w = 0, logit_w = 0, prob_w = 0;
    bool bars = true;
    std::vector<int> columns;  // the view's columns drawn, by index
};

// The columns a width holds: every stage with bars, then without bars, then without the logit
// column, then without ÷T; the probability columns share what is left.
Geometry fit_columns(const SamplingView& v, float width, float fh, float lab_w) {
    Geometry g;
    g.lab_w = lab_w;
    for (const SamplingColumn& c : v.columns) {
        if (c.probability) continue;
        g.logit_w = std::max(g.logit_w, text_width(c.head, fh));
        for (const std::string& t : c.text) g.logit_w = std::max(g.logit_w, text_width(t, fh));
    }
    g.logit_w += fh * 0.6f;
    float pct_w = text_width("100.0%", fh);
    for (const SamplingColumn& c : v.columns)
        if (c.probability) {
            pct_w = std::max(pct_w, text_width(c.head, fh));
            for (const std::string& t : c.text) pct_w = std::max(pct_w, text_width(t, fh));
        }
    pct_w += fh * 0.6f;
    int logits = 2;
    g.bars = lab_w + 2 * g.logit_w + 3 * (pct_w + fh * 3) <= width;
    if (!g.bars)
        while (logits > 0 && lab_w + logits * g.logit_w + 3 * pct_w > width) --logits;
    for (int i = 0; i < static_cast<int>(v.columns.size()); ++i)
        if (v.columns[i].probability || i >= 2 - logits) g.columns.push_back(i);
    g.prob_w = std::max(pct_w, (width - lab_w - logits * g.logit_w) / 3);
    return g;
}

void draw_bar_cell(ImDrawList* dl, ImVec2 at, float w, float row_h, float fh, float value,
                   const std::string& text, ImU32 bar, ImU32 ink, bool bars) {
    const float ty = at.y + (row_h - fh) * 0.5f;
    if (!bars) {
        put_text(ImVec2(at.x, ty), ink, text);
        return;
    }
    const float pct_w = text_width(text, fh) + fh * 0.3f;
    const float span = std::max(0.0f, w - pct_w - fh * 0.6f);
    const float bw = std::isfinite(value) ? span * std::clamp(value, 0.0f, 1.0f) : 0;
    // Below a millionth the text says 0.0% (gui/views/sampling_view.h): no bar either.
    if (bw > 0 && value >= 1e-6f)
        dl->AddRectFilled(ImVec2(at.x, at.y + row_h * 0.15f),
                          ImVec2(at.x + std::max(bw, 1.0f), at.y + row_h * 0.85f), bar, 2);
    put_text(ImVec2(at.x + bw + fh * 0.25f, ty), ink, text);
}

void record(FrameContext& f, const SamplingStages& st, const SamplingView& v, const Geometry& g,
            int step, bool preview) {
    if (!f.layout) return;
    SamplingRecord& rec = f.layout->sampling;
    rec.drawn = true;
    rec.preview = preview;
    rec.step = step;
    rec.temperature = st.temperature;
    rec.top_k = st.top_k;
    rec.top_p = st.top_p;
    rec.coin = st.coin;
    rec.drawn_id = st.drawn;
    rec.ids = v.ids;
    rec.logit = v.columns[0].value;
    rec.scaled = v.columns[1].value;
    rec.tempered = v.columns[2].value;
    rec.top_k_p = v.columns[3].value;
    rec.final_p = v.columns[4].value;
    rec.rest_tempered = st.rest_tempered;
    rec.rest_top_k = st.rest_top_k;
    rec.rest_final = st.rest_final;
    for (int c : g.columns) rec.columns.push_back(v.columns[c].head);
    f.layout->next_tokens_shown = static_cast<int>(v.ids.size());
}

// The draw: the final distribution's tokens side by side in the draw's order (each as wide as
// its probability), what no listed token holds left empty, and the coin's place.
void draw_strip(FrameContext& f, const SamplingView& v, ImVec2 at, float w, float fh) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float h = fh * 0.9f;
    dl->AddRect(at, ImVec2(at.x + w, at.y + h), f.theme.axis);
    for (const DrawSegment& s : v.strip) {
        const bool drawn = s.row == v.drawn_row;
        const ImU32 col = drawn ? f.theme.chip_chosen : f.theme.series[s.row % 2 ? 1 : 0];
        const float x0 = at.x + w * s.from, x1 = at.x + w * (s.from + s.width);
        dl->AddRectFilled(ImVec2(x0, at.y + 1), ImVec2(std::max(x1 - 1, x0 + 1), at.y + h - 1),
                          col);
    }
    if (v.coin < 0) return;
    const float cx = at.x + w * std::clamp(v.coin, 0.0f, 1.0f);
    dl->AddLine(ImVec2(cx, at.y - fh * 0.2f), ImVec2(cx, at.y + h + fh * 0.2f), f.theme.marker,
                std::max(2.0f, fh * 0.15f));
    char b[64];
    std::snprintf(b, sizeof b, tr("coin %.4f"), static_cast<double>(v.coin));
    const float tw = text_width(b, fh);
    put_text(ImVec2(std::clamp(cx - tw * 0.5f, at.x, at.x + w - tw), at.y + h + fh * 0.2f),
             ImGui::GetColorU32(ImGuiCol_Text), b);
}

}  // namespace

void draw_sampling_stages(FrameContext& f, NextTokenPanel& p, const StepRecord& r, int step,
                          const SamplerConfig& shown, bool preview) {
    const float fh = f.font_px, row_h = fh * 1.15f, strip_h = fh * 2.4f;
    const ImU32 muted = f.theme.muted_text, ink = ImGui::GetColorU32(ImGuiCol_Text);
    const float width = ImGui::GetContentRegionAvail().x;
    ImGui::PushStyleColor(ImGuiCol_Text, preview ? f.theme.warning_text : muted);
    if (preview)
        ImGui::TextWrapped(tr("preview: this step's logits at the controls' settings, no draw "
                              "(the draw used temperature %g, top-k %d, top-p %g)"),
                           static_cast<double>(r.sampling.temperature), r.sampling.top_k,
                           static_cast<double>(r.sampling.top_p));
    else
        ImGui::TextWrapped("%s", tr("the distribution the draw used, stage by stage:"));
    ImGui::PopStyleColor();
    // Rows that fit under the rule line, the header, the rest and the strip (one for the drawn
    // token when it is not among the most likely), at least three.
    const float below = ImGui::GetContentRegionAvail().y - fh * 2.6f - row_h * 2 - strip_h;
    const int entries = std::clamp(static_cast<int>(below / row_h) - 1, 3, kMaxSamplingEntries);
    const SamplingStages* st = stages_for(f, p, r, step, shown, preview, entries);
    if (!st) {
        ImGui::TextWrapped("%s", tr("this step's logits were not kept (the trace budget): no "
                                    "stages to show"));
        return;
    }
    const SamplingView v = sampling_view(*st);
    ImGui::PushStyleColor(ImGuiCol_Text, muted);
    rule_line(v.rule, fh);
    ImGui::PopStyleColor();
    float lab_need = std::max({text_width(tr("token"), fh), text_width(tr("the rest"), fh),
                               text_width(tr("the draw"), fh)});
    for (int id : v.ids) lab_need = std::max(lab_need, text_width(f.label(id), fh));
    const float lab_w = std::min(fh * 6, lab_need + fh * 0.5f);
    const Geometry g = fit_columns(v, width, fh, lab_w);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    auto column_x = [&](std::size_t k) {
        float x = o.x + g.lab_w;
        for (std::size_t j = 0; j < k; ++j)
            x += v.columns[g.columns[j]].probability ? g.prob_w : g.logit_w;
        return x;
    };
    put_text(o, muted, tr("token"));
    for (std::size_t k = 0; k < g.columns.size(); ++k)
        put_text(ImVec2(column_x(k), o.y), muted, v.columns[g.columns[k]].head);
    float y = o.y + row_h;
    const int rows = static_cast<int>(v.ids.size());
    for (int i = 0; i <= rows; ++i, y += row_h) {
        const bool rest = i == rows, drawn = i == v.drawn_row;
        if (drawn)
            dl->AddRectFilled(ImVec2(o.x, y), ImVec2(o.x + width, y + row_h), f.theme.chip_pending,
                              3);
        const std::string label = rest ? tr("the rest") : f.label(v.ids[i]);
        put_text(ImVec2(o.x, y + (row_h - fh) * 0.5f), drawn ? ink : muted,
                 clipped(label, g.lab_w - fh * 0.3f));
        for (std::size_t k = 0; k < g.columns.size(); ++k) {
            const SamplingColumn& c = v.columns[g.columns[k]];
            const float w = c.probability ? g.prob_w : g.logit_w;
            const ImVec2 at(column_x(k), y);
            if (rest) {
                if (c.probability)
                    draw_bar_cell(dl, at, w, row_h, fh, c.rest, c.rest_text, f.theme.series_other,
                                  muted, g.bars);
                continue;
            }
            const bool final_col = c.kind == SamplingColumnKind::Final;
            const ImU32 bar = drawn && final_col ? f.theme.chip_chosen : f.theme.series[0];
            if (c.probability && !c.cut[i])
                draw_bar_cell(dl, at, w, row_h, fh, c.value[i], c.text[i], bar, drawn ? ink : muted,
                              g.bars);
            else
                put_text(ImVec2(at.x, y + (row_h - fh) * 0.5f), muted, c.text[i]);
        }
    }
    // The strip under the probability columns, the coin's place under it.
    if (!v.strip.empty()) {
        put_text(ImVec2(o.x, y + fh * 0.1f), muted, clipped(tr("the draw"), g.lab_w - fh * 0.3f));
        draw_strip(f, v, ImVec2(o.x + g.lab_w, y + fh * 0.1f), width - g.lab_w - fh * 0.3f, fh);
    }
    record(f, *st, v, g, step, preview);
    ImGui::Dummy(ImVec2(width, y - o.y + (v.strip.empty() ? 0 : strip_h)));
}

}  // namespace kvs::gui
