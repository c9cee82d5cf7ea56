// Inside attention: one query row of one (layer, head) as the arithmetic the tutorials write,
//     out = softmax(q · Kᵀ / √d_k + mask) · V,
// with this row's own numbers (core/session/attention_explain.h, built from the trace). Left to
// right: q [1, d_k]; the K rows [T, d_k], each marked cached / new / recomputed; the raw scores
// q·k_j; the same ×1/√d_k; the mask; the softmax weights; the V rows [T, d_v]; the output Σ_j
// w_j·v_j. One row of the diagram per key j. Every text it draws is recorded for --layout-json.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "core/model/toy_model.h"
#include "core/util/format.h"
#include "gui/engine_words.h"
#include "gui/inside_attention.h"
#include "gui/panels.h"
#include "lessonlib/lesson_report.h"

namespace kvs::gui {
namespace {

Rgba source_colour(const HeatmapPalette& pal, KvSource s) {
    switch (s) {
        case KvSource::Cached:
            return pal.read;
        case KvSource::New:
            return pal.highlight;
        case KvSource::Recomputed:
            return pal.recomputed;
    }
    return pal.missing;
}

const char* source_words(KvSource s) {
    switch (s) {
        case KvSource::Cached:
            return tr("cached: read from the KV cache");
        case KvSource::New:
            return tr("new: written to the cache by this step");
        case KvSource::Recomputed:
            return tr("recomputed: no cache, computed again from the tokens");
    }
    return "";
}

// Black or white, whichever reads on `bg`.
ImU32 text_on(Rgba bg) {
    const float l = 0.299f * bg.r + 0.587f * bg.g + 0.114f * bg.b;
    return l > 140 ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

float max_abs(const std::vector<float>& v) {
    float m = 0;
    for (float x : v)
        if (std::isfinite(x)) m = std::max(m, std::fabs(x));
    return m > 0 ? m : 1.0f;
}

bool inside(ImVec2 m, ImVec2 a, ImVec2 b) {
    return m.x >= a.x && m.x < b.x && m.y >= a.y && m.y < b.y;
}

// The diagram: one row per key from `first` to e.n_keys - 1, in the box (o, size).
struct Diagram {
    FrameContext& f;
    const AttentionExplain& e;
    const std::vector<int>& tokens;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float fh = f.font_px;

    std::string token_label(int j) const {
        return f.label(j < static_cast<int>(tokens.size()) ? tokens[j] : -1);
    }

    void draw(ImVec2 o, ImVec2 size) {
        const int T = e.n_keys, dk = e.head_dim;
        const int dv = T > 0 ? static_cast<int>(e.v.size()) / T : 0;
        if (T <= 0 || dv <= 0) return;
        const std::vector<ExplainColumn> cols = explain_columns(e);
        const float header_h = fh * 2.5f, legend_h = fh * 1.6f;
        const float area_h = size.y - header_h - legend_h;
        if (area_h < fh * 2) return;
        // Rows tall enough to read (numbers in every cell), else thin rows of colour only (hover
        // for the numbers); past one pixel a row, only the newest keys.
        const bool numbers = T * fh * 1.15f <= area_h;
        float rh = numbers ? std::min(fh * 1.35f, area_h / T) : area_h / T;
        int first = 0;
        if (rh < 1.5f) {
            rh = 1.5f;
            first = T - static_cast<int>(area_h / rh);
        }
        const float gap = fh * 0.7f;
        const float label_w = numbers ? fh * 6.0f : fh * 2.5f;
        const float num_w = fh * 5.2f, mask_w = fh * 3.4f;
        const float fixed = label_w + 3 * num_w + mask_w + 8 * gap;
        // q, K, V and the output share one width so that their channels line up.
        const bool scalar = dk == 1 && dv == 1;
        const float mat_w =
            scalar ? fh * 3.2f : std::clamp((size.x - fixed) / 4, fh * 3.0f, fh * 13.0f);
        const float bar_w = std::max(3.0f, fh * 0.3f);
        float x = o.x + label_w + gap;
        const float widths[] = {mat_w, mat_w, num_w, num_w, mask_w, num_w, mat_w, mat_w};
        float col_x[8];
        for (int c = 0; c < 8; ++c) {
            col_x[c] = x;
            x += widths[c] + gap;
        }
        // Headers: the quantity and its shape in the tutorials' notation.
        for (int c = 0; c < 8; ++c) {
            put_text(ImVec2(col_x[c], o.y), ImGui::GetColorU32(ImGuiCol_Text), cols[c].name);
            put_text(ImVec2(col_x[c], o.y + fh * 1.1f), f.theme.muted_text, cols[c].shape);
        }
        const float y0 = o.y + header_h;
        auto row_y = [&](int j) { return y0 + (j - first) * rh; };
        const float strip_h = std::max(rh, fh * 1.2f);

        const float k_scale = max_abs(e.k), v_scale = max_abs(e.v);
        const float q_scale = std::max(max_abs(e.q), 1e-6f);
        const float out_scale = max_abs(e.output);
        const ImVec2 mouse = ImGui::GetIO().MousePos;
        const bool hovered = ImGui::IsWindowHovered();
        std::string tip;

        // A strip or matrix of values: `n` channels across `w`, coloured by sign and size; with
        // one channel, the number itself.
        auto cells = [&](float cx, float cy, float w, float h, const float* vals, int n,
                         float scale, const char* what, int j) {
            const float cw = w / n;
            for (int i = 0; i < n; ++i) {
                const ImVec2 a(cx + i * cw, cy), b(cx + (i + 1) * cw, cy + h);
                const Rgba c = signed_colour(vals[i], scale);
                dl->AddRectFilled(a, ImVec2(std::max(b.x, a.x + 1), b.y), to_u32(c));
                if (n == 1 && numbers)
                    put_text(ImVec2(a.x + fh * 0.2f, a.y + (h - fh) * 0.5f), text_on(c),
                             fmt_number(vals[i]));
                if (hovered && inside(mouse, a, b)) {
                    char b2[160];
                    if (j >= 0)
                        std::snprintf(b2, sizeof b2, tr("%s row %d, channel %d: %s"), what, j, i,
                                      fmt_number(vals[i]).c_str());
                    else
                        std::snprintf(b2, sizeof b2, tr("%s channel %d: %s"), what, i,
                                      fmt_number(vals[i]).c_str());
                    tip = b2;
                }
            }
        };
        // A column of one number per key, on a background colour.
        auto number_cell = [&](int c, int j, float v, Rgba bg, const std::string& text,
                               const char* what) {
            const ImVec2 a(col_x[c], row_y(j)), b(col_x[c] + widths[c], row_y(j) + rh);
            dl->AddRectFilled(a, ImVec2(b.x, std::max(b.y - 1, a.y + 1)), to_u32(bg));
            if (numbers)
                put_text(ImVec2(a.x + fh * 0.2f, a.y + (rh - fh) * 0.5f), text_on(bg), text);
            if (hovered && inside(mouse, a, b)) {
                char b2[200];
                std::snprintf(b2, sizeof b2, "%s, key %d \"%s\": %s", what, j,
                              token_label(j).c_str(), fmt_number(v).c_str());
                tip = b2;
            }
        };

        // q and the output: one strip each, level with the first key.
        if (!e.q.empty())
            cells(col_x[0], y0, mat_w, strip_h, e.q.data(), dk, q_scale, "q", -1);
        else
            put_text(ImVec2(col_x[0], y0), f.theme.muted_text, tr("(rule)"));
        if (e.empty_row)
            put_text(ImVec2(col_x[7], y0), f.theme.muted_text, tr("none"));
        else if (static_cast<int>(e.output.size()) == dv)
            cells(col_x[7], y0, mat_w, strip_h, e.output.data(), dv, out_scale, tr("output"), -1);

        for (int j = first; j < T; ++j) {
            const float y = row_y(j);
            const bool masked = j < static_cast<int>(e.masked.size()) && e.masked[j];
            // Key label: position and token; the query's own position marked.
            if (numbers) {
                char lab[96];
                std::snprintf(lab, sizeof lab, "%d %s", j, token_label(j).c_str());
                const std::string fit = clipped(lab, label_w - fh * 0.3f);
                put_text(ImVec2(o.x, y + (rh - fh) * 0.5f),
                         j == e.q_pos ? ImGui::GetColorU32(ImGuiCol_Text) : f.theme.muted_text,
                         fit);
            } else if (j == first || j == T - 1 || (j % 50) == 0) {
                put_text(ImVec2(o.x, std::min(y, y0 + area_h - fh)), f.theme.muted_text,
                         std::to_string(j));
            }
            // K and V rows, each with a bar in the colour of where it came from.
            const KvSource src =
                j < static_cast<int>(e.source.size()) ? e.source[j] : KvSource::Cached;
            const ImU32 sc = to_u32(source_colour(f.pal, src));
            const float h = std::max(1.0f, numbers ? rh - 1 : rh);
            for (int c : {1, 6}) {
                dl->AddRectFilled(ImVec2(col_x[c] - bar_w - 1, y), ImVec2(col_x[c] - 1, y + h), sc);
                if (hovered &&
                    inside(mouse, ImVec2(col_x[c] - bar_w - 1, y), ImVec2(col_x[c], y + rh)))
                    tip =
                        std::string(tr("key")) + " " + std::to_string(j) + ": " + source_words(src);
            }
            cells(col_x[1], y, mat_w, h, e.k.data() + std::size_t(j) * dk, dk, k_scale, "K", j);
            cells(col_x[6], y, mat_w, h, e.v.data() + std::size_t(j) * dv, dv, v_scale, "V", j);
            // Scores, scaled scores, mask, weights.
            const float raw = e.raw[j], scaled = e.scaled[j];
            const Rgba neutral = f.theme.dark ? Rgba{45, 45, 50, 255} : Rgba{235, 235, 238, 255};
            number_cell(2, j, raw, std::isinf(raw) ? f.pal.mask : neutral, fmt_number(raw),
                        "q·k_j");
            number_cell(3, j, scaled, std::isinf(scaled) ? f.pal.mask : neutral, fmt_number(scaled),
                        tr("scaled score"));
            number_cell(4, j, masked ? -INFINITY : 0.0f, masked ? f.pal.mask : neutral,
                        masked ? "−∞" : "+0", tr("mask"));
            const float w = e.weights[j];
            number_cell(5, j, w, masked || e.empty_row ? f.pal.mask : weight_colour(w, f.pal.scale),
                        fmt_number(w), tr("weight"));
        }
        if (first > 0) {
            char b[96];
            std::snprintf(b, sizeof b, tr("keys 0..%d not drawn (no room)"), first - 1);
            put_text(ImVec2(o.x, y0 + area_h + fh * 0.1f), f.theme.muted_text, b);
        }
        // Legend: where each K/V row came from.
        float lx = o.x;
        const float ly = o.y + size.y - fh * 1.3f;
        for (KvSource s : {KvSource::Cached, KvSource::New, KvSource::Recomputed}) {
            dl->AddRectFilled(ImVec2(lx, ly + fh * 0.15f), ImVec2(lx + fh * 0.8f, ly + fh * 0.95f),
                              to_u32(source_colour(f.pal, s)));
            const char* w = source_words(s);
            put_text(ImVec2(lx + fh, ly), f.theme.muted_text, w);
            lx += fh * 2 + ImGui::CalcTextSize(w).x;
        }
        if (!tip.empty()) ImGui::SetTooltip("%s", tip.c_str());
    }
};

}  // namespace

void put_text(ImVec2 p, ImU32 col, const std::string& text, float size) {
    const float px = size > 0 ? size : ImGui::GetFontSize();
    ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), px, p, col, text.c_str());
}

float put_wrapped(ImVec2 p, ImU32 col, const std::string& text, float width) {
    ImFont* font = ImGui::GetFont();
    const float px = ImGui::GetFontSize(), line_h = ImGui::GetTextLineHeightWithSpacing();
    const char* s = text.c_str();
    const char* end = s + text.size();
    float y = p.y;
    while (s < end) {
        const char* cut = font->CalcWordWrapPositionA(1.0f, s, end, std::max(width, px * 4));
        if (cut == s) cut = end;  // nothing fits: the rest on one line rather than loop
        put_text(ImVec2(p.x, y), col, std::string(s, cut));
        y += line_h;
        s = cut;
        while (s < end && *s == ' ') ++s;
    }
    return y - p.y;
}

void open_inside_attention(UiState& ui, int session, int layer, int head, int q_pos) {
    ui.explain.open = true;
    ui.explain.session = session;
    ui.explain.layer = layer;
    ui.explain.head = head;
    ui.explain.q_pos = q_pos;
    ui.settings.layer = layer;
    ui.settings.head = head;
}

void move_inside_attention_row(FrameContext& f, int delta) {
    ExplainUi& x = f.ui.explain;
    if (!x.open || f.snap.sessions.empty()) return;
    const SessionView& sv =
        f.snap.sessions[std::clamp(x.session, 0, int(f.snap.sessions.size()) - 1)];
    const int s = shown_step(sv, f.step);
    const auto cur = step_row_of(sv.trace.steps(), s, x.q_pos);
    const auto newest = step_row_of(sv.trace.steps(), s, -1);
    if (!cur || !newest) return;
    const int q = std::clamp(cur->q_pos + delta, 0, newest->q_pos);
    x.q_pos = q == newest->q_pos ? -1 : q;
}

void draw_inside_attention(FrameContext& f) {
    const float fh = f.font_px;
    const Model* model = f.model();
    ExplainUi& x = f.ui.explain;
    if (f.layout) f.layout->explain.open = true;
    if (!model || f.snap.sessions.empty()) {
        ImGui::TextUnformatted(tr("No model open."));
        return;
    }
    const ModelConfig& c = model->config();
    x.session = std::clamp(x.session, 0, static_cast<int>(f.snap.sessions.size()) - 1);
    x.layer = std::clamp(x.layer, 0, c.n_layers - 1);
    x.head = std::clamp(x.head, 0, c.n_heads - 1);
    const SessionView& sv = f.snap.sessions[x.session];
    const int s = shown_step(sv, f.step);
    const auto where = s < 0 ? std::nullopt : step_row_of(sv.trace.steps(), s, x.q_pos);
    std::string why;
    std::optional<AttentionExplain> e;
    if (!where)
        why = tr("Nothing computed yet: step the model (Space), then pick a row.");
    else
        e = explain_attention(sv.trace, c, where->step, x.layer, x.head, where->row, &why);
    if (f.layout) {
        ExplainRecord& r = f.layout->explain;
        r.session = session_label(sv.mode);
        r.layer = x.layer;
        r.head = x.head;
        r.why = e ? "" : why;
        if (e) {
            r.step = e->step;
            r.row = e->row;
            r.q_pos = e->q_pos;
            r.n_keys = e->n_keys;
            r.head_dim = e->head_dim;
            r.phase = phase_name(e->phase);
            r.mode = mode_name(e->mode);
        }
    }
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    if (!e) {
        put_text(o, f.theme.muted_text, why);
        ImGui::Dummy(avail);
        return;
    }
    std::vector<int> tokens = sv.prompt_tokens;
    for (const auto& r : sv.trace.steps()) tokens.push_back(r.token_out);
    const std::string q_tok =
        f.label(e->q_pos < static_cast<int>(tokens.size()) ? tokens[e->q_pos] : -1);

    // Where this row is: layer, head (the toy's by its rule's name), query, step.
    char head_name[64];
    if (model->is_toy())
        std::snprintf(head_name, sizeof head_name, "%d (%s)", e->head, toy_head_name(e->head));
    else
        std::snprintf(head_name, sizeof head_name, "%d", e->head);
    char title[320];
    std::snprintf(title, sizeof title, tr("layer %d, head %s, %s: query \"%s\": step %d (%s, %s)"),
                  e->layer, head_name, query_row_label(e->row, e->q_pos).c_str(), q_tok.c_str(),
                  e->step, e->phase == Phase::Prefill ? tr("prefill") : tr("decode"),
                  e->mode == CacheMode::Cached ? tr("with KV cache") : tr("without KV cache"));
    float y = o.y;
    put_text(ImVec2(o.x, y), f.theme.muted_text, title);
    y += fh * 1.25f;
    put_text(ImVec2(o.x, y), ImGui::GetColorU32(ImGuiCol_Text), kAttentionFormula, fh * 1.3f);
    y += fh * 1.55f;
    const ExplainLines L = explain_lines(*e);
    // This row's numbers, wrapped between their pieces when the panel is narrow.
    float nx = o.x;
    for (const std::string& part : L.number_parts) {
        const float w = ImGui::CalcTextSize(part.c_str()).x;
        if (nx > o.x && nx + w > o.x + avail.x) {
            nx = o.x + fh;
            y += fh * 1.25f;
        }
        put_text(ImVec2(nx, y), ImGui::GetColorU32(ImGuiCol_Text), part);
        nx += w + ImGui::CalcTextSize(" ").x;
    }
    y += fh * 1.25f;
    // The shapes: two per line where the width allows.
    auto pair_line = [&](const std::string& a, const std::string& b) {
        if (a.empty() && b.empty()) return;
        const float wa = ImGui::CalcTextSize(a.c_str()).x;
        put_text(ImVec2(o.x, y), f.theme.muted_text, a);
        if (b.empty()) {
            y += fh * 1.2f;
            return;
        }
        if (wa + fh * 2 + ImGui::CalcTextSize(b.c_str()).x <= avail.x) {
            put_text(ImVec2(o.x + wa + fh * 2, y), f.theme.muted_text, b);
        } else {
            y += fh * 1.2f;
            put_text(ImVec2(o.x, y), f.theme.muted_text, b);
        }
        y += fh * 1.2f;
    };
    pair_line(L.scores, L.output);
    pair_line(L.scale, L.gqa);
    const std::string wq = why_not_q_words(sv.trace.steps()[e->step], report_lang(f.ui.lang));
    if (!wq.empty()) {
        y += put_wrapped(
            ImVec2(o.x, y),
            e->mode == CacheMode::Uncached ? to_u32(f.pal.recomputed) : f.theme.muted_text, wq,
            avail.x);
    }
    y += fh * 0.4f;
    Diagram{f, *e, tokens}.draw(ImVec2(o.x, y), ImVec2(avail.x, o.y + avail.y - y));
    ImGui::Dummy(avail);
}

}  // namespace kvs::gui
