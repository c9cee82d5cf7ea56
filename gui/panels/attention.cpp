// Attention: the weights of one (layer, head) as a heatmap with token labels on both axes, and
// every head as small multiples. Rows are queries, columns keys; cells right of the diagonal
// are causally masked (one flat colour). At the prefill the whole triangle appears at once; each
// decode step adds exactly one row, outlined. The matrix is put back together from the trace.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "core/util/format.h"
#include "core/util/numbering.h"
#include "gui/draw/text.h"
#include "gui/panels/attention.h"
#include "gui/state/strings.h"
#include "gui/views/attention_matrix.h"
#include "gui/views/engine_words.h"
#include "gui/views/inside_attention_text.h"
#include "gui/views/panel_layout.h"
#include "lessonlib/why_not_q_words.h"

namespace kvs::gui {
namespace {

// Text drawn upwards from `pivot` (its baseline runs bottom to top), for column labels.
void add_text_vertical(ImDrawList* dl, ImVec2 pivot, ImU32 col, const char* text, float px) {
    const int start = dl->VtxBuffer.Size;
    dl->AddText(ImGui::GetFont(), px, pivot, col, text);
    for (int i = start; i < dl->VtxBuffer.Size; ++i) {
        ImVec2& p = dl->VtxBuffer[i].pos;
        const float dx = p.x - pivot.x, dy = p.y - pivot.y;
        p = ImVec2(pivot.x + dy, pivot.y - dx);
    }
}

// Label every k-th position so labels do not overlap: k in 1, 2, 5, 10, 20, 50, ...
int label_stride(float cell, float need) {
    if (cell <= 0) return 1;
    for (int mag = 1;; mag *= 10)
        for (int k : {1, 2, 5})
            if (cell * k * mag >= need) return k * mag;
}

AttentionTexture& head_texture(FrameContext& f, int si, const AttentionMatrixRows& m, int layer,
                               int head) {
    auto& heads = f.textures[si].heads;
    const std::size_t want = std::size_t(m.n_layers) * m.n_heads;
    if (heads.size() != want) {
        heads.clear();
        for (std::size_t i = 0; i < want; ++i)
            heads.push_back(std::make_unique<AttentionTexture>());
    }
    AttentionTexture& t = *heads[std::size_t(layer) * m.n_heads + head];
    // Rows of one key never change, except a bidirectional matrix's at every step.
    t.update(
        m, layer, head, f.pal,
        texture_key({f.snap.generation, std::uint64_t(si), std::uint64_t(layer),
                     std::uint64_t(head), f.palette_id(), std::uint64_t(m.all_keys_step + 1)}));
    return t;
}

// Colour bar with ticks, the scale's name, then a swatch per kind of cell that is not a weight,
// one per line (recomputed rows: when a step shown recomputed any): it sits under the small
// multiples, `w` wide. Returns its height.
float legend(FrameContext& f, ImVec2 p, float w, bool any_empty, bool recomputed) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px, bar_h = fh * 0.7f;
    char sc[48];
    std::snprintf(sc, sizeof sc, tr("%s scale"), tr(weight_scale_name(f.pal.scale)));
    dl->AddText(p, f.theme.muted_text, sc);
    p.y += fh * 1.2f;
    const int steps = 64;
    for (int i = 0; i < steps; ++i) {
        const float t0 = float(i) / steps, t1 = float(i + 1) / steps;
        dl->AddRectFilled(ImVec2(p.x + w * t0, p.y), ImVec2(p.x + w * t1 + 1, p.y + bar_h),
                          to_u32(sequential_colour(t0)));
    }
    // Ticks where the weights fall on the current colour scale.
    const float ticks[] = {0.0f, 0.01f, 0.1f, 0.5f, 1.0f};
    float last_x = -1e9f;
    for (float wgt : ticks) {
        const float x = p.x + w * scale_weight(wgt, f.pal.scale);
        char b[16];
        std::snprintf(b, sizeof b, "%g", wgt);
        const float tw = ImGui::CalcTextSize(b).x;
        const float tx = std::clamp(x - tw * 0.5f, p.x, p.x + w - tw);
        if (tx < last_x + fh * 0.3f) continue;
        dl->AddLine(ImVec2(x, p.y + bar_h), ImVec2(x, p.y + bar_h + 3), f.theme.axis);
        dl->AddText(ImVec2(tx, p.y + bar_h + 2), f.theme.muted_text, b);
        last_x = tx + tw;
    }
    float y = p.y + bar_h + fh * 1.4f;
    auto swatch = [&](Rgba c, const char* label, bool outline) {
        if (outline)
            dl->AddRect(ImVec2(p.x, y), ImVec2(p.x + bar_h, y + bar_h), to_u32(c), 0, 0, 2);
        else
            dl->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + bar_h, y + bar_h), to_u32(c));
        dl->AddText(ImVec2(p.x + bar_h + 4, y - fh * 0.15f), f.theme.muted_text, label);
        y += fh * 1.15f;
    };
    swatch(f.pal.mask, tr("masked"), false);
    if (any_empty) swatch(f.pal.empty_row, tr("none"), false);
    swatch(f.pal.highlight, tr("new this step"), true);
    if (recomputed) swatch(f.pal.recomputed, tr("recomputed"), true);
    return y - p.y + fh * 1.2f;
}

// While Inside attention builds its row stage by stage, the weights of its (layer, head) come at
// the softmax stage: before it the heatmaps of that head keep them covered, so no panel shows
// an answer the build has not reached.
bool weights_not_yet(const ExplainUi& x, int layer, int head) {
    return x.open && x.stage >= 0 && x.stage < kSoftmaxStage && layer == x.layer && head == x.head;
}

// The weight in each cell of the shown square (positions first..n-1, origin a) when the cells are
// large enough to read it (the toy's always).
void draw_cell_weights(FrameContext& f, const AttentionMatrixRows& m, int layer, int head,
                       int first, ImVec2 a, float cell) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px;
    const int n = m.n;
    const bool toy = f.model() && f.model()->is_toy();
    // Numbers grow with the cells (no cap at the text size): a room reads the large ones.
    const float num_px = cell * 0.4f;
    if (num_px >= fh * 0.6f || (toy && num_px >= 7)) {
        for (int q = first; q < n; ++q)
            for (int k = first; k < n; ++k) {  // past the diagonal only without the mask
                const CellValue v = attention_cell(m, layer, head, q, k);
                if (v.kind != CellKind::Weight) continue;
                char t[16];
                std::snprintf(t, sizeof t, "%.2f", v.weight);
                const char* shown_t = t[0] == '0' && t[1] == '.' ? t + 1 : t;  // ".42"
                if (std::string(shown_t) == "1.00") shown_t = "1";
                const float tw = text_width(shown_t, num_px);
                if (tw > cell - 2) continue;
                const Rgba c = sequential_colour(scale_weight(v.weight, f.pal.scale));
                const bool dark = 0.299f * c.r + 0.587f * c.g + 0.114f * c.b < 140;
                dl->AddText(ImGui::GetFont(), num_px,
                            ImVec2(a.x + cell * (k - first + 0.5f) - tw * 0.5f,
                                   a.y + cell * (q - first + 0.5f) - num_px * 0.5f),
                            dark ? IM_COL32(255, 255, 255, 255) : IM_COL32(0, 0, 0, 255), shown_t);
            }
    }
}

// The corner between the axis labels names the axes where it has room.
void draw_axis_names(FrameContext& f, ImVec2 a, float left_w, float top_h) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px;
    const ImU32 lab = f.theme.muted_text;
    const std::string qw = tr("query ↓"), kw = tr("key →");
    const float room_w = left_w - fh * 0.4f, room_h = top_h;
    const float px =
        std::min({fh, room_h / 2.3f,
                  room_w / std::max({text_width(qw, fh) / fh, text_width(kw, fh) / fh, 1.0f})});
    if (px >= fh * 0.6f) {
        dl->AddText(ImGui::GetFont(), px,
                    ImVec2(a.x - fh * 0.25f - text_width(kw, px), a.y - px * 2.2f), lab,
                    kw.c_str());
        dl->AddText(ImGui::GetFont(), px,
                    ImVec2(a.x - fh * 0.25f - text_width(qw, px), a.y - px * 1.1f), lab,
                    qw.c_str());
    }
}

// The tooltip of cell (q, k): which query, which key, what weight, and where the row came from.
void cell_tooltip(FrameContext& f, const AttentionMatrixRows& m, int layer, int head, int q, int k,
                  bool hidden, const std::vector<int>& tokens) {
    auto tok = [&](int p) { return f.label(p < static_cast<int>(tokens.size()) ? tokens[p] : -1); };
    const CellValue v = attention_cell(m, layer, head, q, k);
    ImGui::BeginTooltip();
    ImGui::Text(tr("query at position %d \"%s\"  ->  key at position %d \"%s\""), q + 1,
                tok(q).c_str(), k + 1, tok(k).c_str());
    switch (v.kind) {
        case CellKind::Weight:
            if (hidden)
                ImGui::Text(tr("the weights come at stage %d (softmax)"), kSoftmaxStage + 1);
            else
                ImGui::Text(tr("weight %.4f"), v.weight);
            break;
        case CellKind::Masked:
            ImGui::TextUnformatted(tr("masked: a query never sees tokens after it"));
            break;
        case CellKind::EmptyRow:
            ImGui::TextUnformatted(tr("no key this head may attend to: output none"));
            break;
        case CellKind::Missing:
            ImGui::TextUnformatted(tr("not in the trace any more (dropped to save memory)"));
            break;
    }
    if (m.rows[q].step >= 0)
        ImGui::Text(tr("row computed at step %d (%s)"), m.rows[q].step,
                    m.rows[q].step == 0 ? tr("prefill") : tr("decode"));
    ImGui::TextDisabled("%s", tr("click: this row's arithmetic (Inside attention)"));
    ImGui::TextDisabled("%s", tr("mouse wheel: zoom into the newest tokens; double-click: all"));
    ImGui::EndTooltip();
}

// The large heatmap of session `si` in the box (origin, size), labels included. Zoomed in, it
// shows the square of the newest tokens (positions first..n-1), where decode steps add rows.
// Returns whether it outlined rows the step recomputed (the legend then names their colour).
// `name_session`: the title starts with the session's label (off for two heads of one session).
// `zoom`: the panel's (the mouse wheel changes it).
bool main_heatmap(FrameContext& f, ExplainUi& x, float& zoom, int si, const AttentionMatrixRows& m,
                  int layer, int head, ImVec2 origin, ImVec2 size, const std::vector<int>& tokens,
                  bool name_session) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px;
    const SessionView& sv = f.snap.sessions[si];
    const int n = m.n;
    const int shown = n == 0 ? 0 : std::clamp(int(std::ceil(n / zoom)), std::min(n, 8), n);
    const int first = n - shown;
    // Room for labels first: pieces when the cells are tall enough to read, else positions. The
    // stage may cap the side (the same size at every text size, gui/views/panel_layout.h).
    auto frame_for = [&](bool pieces) {
        HeatmapFrame hf = heatmap_frame(size.x, size.y, fh, pieces);
        if (f.caps.heat_side > 0) hf.side = std::min(hf.side, f.caps.heat_side);
        return hf;
    };
    HeatmapFrame hf = frame_for(false);
    // Pieces while a label can be at least 0.6 of the text height (smaller cells, smaller labels,
    // abbreviated; hovering one shows it whole), else positions.
    const bool pieces = shown > 0 && frame_for(true).side / shown >= fh * 0.6f;
    if (pieces) hf = frame_for(true);
    const float side = std::max(1.0f, hf.side), top_h = hf.top_h, left_w = hf.left_w;
    const float title_h = hf.title_h;
    const ImVec2 a(origin.x + left_w, origin.y + title_h + top_h);
    const ImVec2 b(a.x + side, a.y + side);
    char title[160];
    int len = name_session
                  ? std::snprintf(title, sizeof title, tr("%s: layer %d, head %d"),
                                  step_label(sv, shown_step(sv, f.step)), layer, head)
                  : std::snprintf(title, sizeof title, tr("layer %d, head %d"), layer, head);
    // A query head that shares its K/V head (GQA, MQA) names it: two heads of one group compare
    // different queries with the same keys.
    // Left out where the title would not fit (compare mode in a narrow panel).
    if (const Model* md = f.model(); md && md->config().n_kv_heads < md->config().n_heads &&
                                     len > 0 && len < int(sizeof title)) {
        char kv[64];
        std::snprintf(kv, sizeof kv, tr(" (K/V head %d)"), head / md->config().kv_mul());
        if (text_width(std::string(title) + kv, fh) <= size.x - fh * 0.3f)
            len += std::snprintf(title + len, sizeof title - len, "%s", kv);
    }
    if (first > 0 && len > 0 && len < int(sizeof title))
        std::snprintf(title + len, sizeof title - len, tr("  (zoom: positions %d..%d)"), first + 1,
                      n);
    // Side by side (compare mode, a lesson open) the title may be wider than its heatmap; a box
    // too short for a line (a squeezed stage) has no title.
    if (size.y >= fh * 1.3f)
        dl->AddText(origin, ImGui::GetColorU32(ImGuiCol_Text),
                    clipped(title, size.x - fh * 0.3f).c_str());
    if (n == 0) return false;
    const bool hidden = weights_not_yet(x, layer, head);
    if (hidden) {
        dl->AddRectFilled(a, b, to_u32(f.pal.missing));
        char b2[160];
        std::snprintf(b2, sizeof b2, tr("the weights come at stage %d (softmax)"),
                      kSoftmaxStage + 1);
        put_wrapped(ImVec2(a.x + fh * 0.5f, a.y + fh * 0.5f), f.theme.muted_text, b2, side - fh);
    } else {
        AttentionTexture& tex = head_texture(f, si, m, layer, head);
        dl->AddImage(tex.id(), a, b, ImVec2(tex.uv(first), tex.uv(first)),
                     ImVec2(tex.uv(n), tex.uv(n)));
    }
    const float cell = side / shown;
    auto tok = [&](int p) { return f.label(p < static_cast<int>(tokens.size()) ? tokens[p] : -1); };

    if (!hidden) draw_cell_weights(f, m, layer, head, first, a, cell);

    // Axis labels: queries down the left, keys across the top.
    const ImU32 lab = f.theme.muted_text;
    draw_axis_names(f, a, left_w, top_h);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (pieces) {
        const float px = std::min(fh, cell * 0.9f);
        for (int i = 0; i < shown; ++i) {
            const std::string full = tok(first + i);
            const std::string t = clipped(full, left_w - fh * 0.4f, px);
            const float tw = text_width(t, px);
            const float cy = a.y + cell * (i + 0.5f), cx = a.x + cell * (i + 0.5f);
            dl->AddText(ImGui::GetFont(), px, ImVec2(a.x - tw - fh * 0.25f, cy - px * 0.5f), lab,
                        t.c_str());
            const std::string tk = clipped(full, top_h - fh * 0.3f, px);
            add_text_vertical(dl, ImVec2(cx - px * 0.5f, a.y - fh * 0.2f), lab, tk.c_str(), px);
            // Abbreviated labels show in full under the mouse.
            const bool on_left = mouse.x >= a.x - left_w && mouse.x < a.x &&
                                 mouse.y >= cy - cell * 0.5f && mouse.y < cy + cell * 0.5f;
            const bool on_top = mouse.y >= a.y - top_h && mouse.y < a.y &&
                                mouse.x >= cx - cell * 0.5f && mouse.x < cx + cell * 0.5f;
            if (ImGui::IsWindowHovered() && (on_left || on_top))
                ImGui::SetTooltip(tr("position %d: \"%s\""), position_of_index(first + i),
                                  full.c_str());
        }
    } else {
        const int k = label_stride(cell, fh * 2.2f);
        for (int p = first + (k - 1 - first % k) % k; p < n; p += k) {
            char t[16];
            std::snprintf(t, sizeof t, "%d", p + 1);  // index p is position p + 1
            const float tw = ImGui::CalcTextSize(t).x, c = cell * (p - first + 0.5f);
            dl->AddText(ImVec2(a.x - tw - fh * 0.25f, a.y + c - fh * 0.5f), lab, t);
            dl->AddText(ImVec2(a.x + c - tw * 0.5f, a.y - fh * 1.2f), lab, t);
        }
    }
    // Without the cache a step recomputes every earlier row too (their Q, K and V), and keeps
    // only the newest: each recomputed row gets an outline of its own colour, then the rows this
    // step computed and kept a crisp outline (no anti-aliasing) in one exact colour.
    const int ss = shown_step(sv, f.step);
    const StepRecord* st = ss >= 0 ? &sv.trace.steps()[ss] : nullptr;
    int rb = 0, re = 0;
    if (st && st->mode == CacheMode::Uncached && st->phase == Phase::Decode) {
        rb = st->pos0;
        re = std::min(n, st->pos0 + st->tokens_processed);
    }
    // The marks of where rows came from scale with the text (2 px at text 1).
    const float mark = std::max(2.0f, std::round(fh * 0.125f));
    const ImDrawListFlags saved = dl->Flags;
    dl->Flags &= ~(ImDrawListFlags_AntiAliasedLines | ImDrawListFlags_AntiAliasedLinesUseTex);
    for (int q = std::max(rb, first); q < re; ++q) {
        if (q >= m.new_begin && q < m.new_end) continue;
        const float ry = std::floor(a.y + cell * (q - first));
        const float rx = std::floor(a.x + cell * (q + 1 - first));
        dl->AddRect(ImVec2(std::floor(a.x) - 1.5f, ry - 0.5f), ImVec2(rx + 1.5f, ry + cell + 0.5f),
                    to_u32(f.pal.recomputed), 0, 0, cell >= 6 ? mark : 1.0f);
    }
    const int nb = std::max(m.new_begin, first) - first, ne = m.new_end - first;
    if (ne > nb)
        dl->AddRect(ImVec2(std::floor(a.x) - 1.5f, std::floor(a.y + cell * nb) - 1.5f),
                    ImVec2(std::floor(a.x + cell * ne) + 1.5f, std::floor(a.y + cell * ne) + 1.5f),
                    to_u32(f.pal.highlight), 0, 0, mark);
    dl->Flags = saved;
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), f.theme.axis);

    if (f.layout)
        f.layout->heatmaps.push_back({session_label(sv), true, layer, head, n, first,
                                      Rect{a.x, a.y, side, side}, m.new_begin, m.new_end, rb, re,
                                      hidden});

    // Hover: which query, which key, what weight; the wheel zooms into the newest tokens.
    if (ImGui::IsWindowHovered() && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y &&
        mouse.y < b.y) {
        const float wheel = ImGui::GetIO().MouseWheel;
        if (wheel != 0) zoom = std::clamp(zoom * (wheel > 0 ? 1.25f : 0.8f), 1.0f, 64.0f);
        if (ImGui::IsMouseDoubleClicked(0)) zoom = 1.0f;
        const int q = first + std::clamp(int((mouse.y - a.y) / cell), 0, shown - 1);
        const int k = first + std::clamp(int((mouse.x - a.x) / cell), 0, shown - 1);
        // A click opens the arithmetic of this query row.
        if (ImGui::IsMouseClicked(0)) open_inside_attention(f.ui, x, si, layer, head, q);
        cell_tooltip(f, m, layer, head, q, k, hidden, tokens);
    }
    return re > rb;
}

// Every (layer, head) as a small heatmap in the box; clicking one shows it large. `recomputed`:
// a heatmap outlined recomputed rows (the legend names their colour).
void small_multiples(FrameContext& f, ExplainUi& x, const AttentionMatrixRows& m, ImVec2 origin,
                     ImVec2 size, bool recomputed) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px;
    const int L = m.n_layers, H = m.n_heads;
    if (L == 0 || H == 0) return;
    // The legend at the bottom of the column.
    // (Rows with no key to attend to are marked in their step's AttentionRows: each step's once,
    // not every cell of every head: 4096 tokens made that 131,072 lookups a frame.)
    bool any_empty = false;
    const AttentionRows* seen = nullptr;
    for (int q = 0; q < m.n && !any_empty; ++q) {
        const AttentionRows* a = m.rows[q].rows;
        if (!a || a == seen) continue;
        seen = a;
        any_empty = std::find(a->empty_row.begin(), a->empty_row.end(), 1) != a->empty_row.end();
    }
    const float legend_h = fh * ((any_empty ? 6.6f : 5.5f) + (recomputed ? 1.15f : 0));
    // Under the title and a row of small heatmaps only (the lines above the heatmaps, e.g. the
    // why-not-Q lines, may leave a short panel no room for it: then no legend, never overlap).
    if (size.y >= legend_h + fh * 4) {
        legend(f, ImVec2(origin.x, origin.y + size.y - legend_h), std::min(size.x - fh, fh * 12),
               any_empty, recomputed);
        size.y -= legend_h + fh * 0.3f;
    }
    if (size.y < fh * 1.2f) return;
    dl->AddText(origin, ImGui::GetColorU32(ImGuiCol_Text),
                clipped(tr("All heads (click one)"), size.x).c_str());
    // Query heads grouped under the K/V head they share (GQA, MQA): a wider gap between groups
    // and a bracket named for the group's K/V head above them.
    const int kvh = f.model() ? std::max(1, f.model()->config().n_kv_heads) : H;
    const int group = kvh < H && H % kvh == 0 ? H / kvh : 1;
    const int groups = H / group;
    const float lab_w = fh * 1.8f, gap = std::max(2.0f, fh * 0.2f);
    const float group_gap = group > 1 ? gap * 3 : 0;
    const float lab_h = fh * (group > 1 ? 3.5f : 2.3f);
    const float c = std::floor(
        std::min((size.x - lab_w - group_gap * (groups - 1)) / H, (size.y - lab_h) / L) - gap);
    if (c < 4) return;
    const ImVec2 g(origin.x + lab_w, origin.y + lab_h);
    auto head_x = [&](int h) { return g.x + h * (c + gap) + (h / group) * group_gap; };
    const bool every = c + gap >= ImGui::CalcTextSize("H00").x;
    for (int h = 0; h < H; ++h) {
        if (!every && h != 0 && h != H - 1) continue;
        char t[16];
        std::snprintf(t, sizeof t, "H%d", h);
        dl->AddText(ImVec2(head_x(h) + c * 0.5f - ImGui::CalcTextSize(t).x * 0.5f, g.y - fh * 1.1f),
                    f.theme.muted_text, t);
    }
    if (group > 1) {
        for (int k = 0; k < groups; ++k) {
            const float x0 = head_x(k * group), x1 = head_x(k * group + group - 1) + c;
            const float y = g.y - fh * 1.35f;
            dl->AddLine(ImVec2(x0, y), ImVec2(x1, y), f.theme.axis, 1.5f);
            dl->AddLine(ImVec2(x0, y), ImVec2(x0, y + fh * 0.2f), f.theme.axis, 1.5f);
            dl->AddLine(ImVec2(x1, y), ImVec2(x1, y + fh * 0.2f), f.theme.axis, 1.5f);
            char t[24];
            std::snprintf(t, sizeof t, "KV%d", k);
            const float tw = ImGui::CalcTextSize(t).x;
            if (tw <= x1 - x0 + gap)
                dl->AddText(ImVec2((x0 + x1 - tw) * 0.5f, y - fh * 1.1f), f.theme.muted_text, t);
        }
    }
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    for (int l = 0; l < L; ++l) {
        char t[16];
        std::snprintf(t, sizeof t, "L%d", l);
        if (c + gap >= fh || l == 0 || l == L - 1)
            dl->AddText(ImVec2(origin.x, g.y + l * (c + gap) + c * 0.5f - fh * 0.5f),
                        f.theme.muted_text, t);
        for (int h = 0; h < H; ++h) {
            const ImVec2 a(head_x(h), g.y + l * (c + gap)), b(a.x + c, a.y + c);
            if (weights_not_yet(x, l, h)) {
                dl->AddRectFilled(a, b, to_u32(f.pal.missing));
            } else {
                AttentionTexture& tex = head_texture(f, 0, m, l, h);
                dl->AddImage(tex.id(), a, b, ImVec2(0, 0), tex.uv_max());
            }
            const bool sel = l == f.ui.settings.layer && h == f.ui.settings.head;
            if (sel)
                dl->AddRect(ImVec2(a.x - 2, a.y - 2), ImVec2(b.x + 2, b.y + 2),
                            to_u32(f.pal.highlight), 0, 0, 2);
            if (f.layout)
                f.layout->heatmaps.push_back({session_label(f.snap.sessions[0]), false, l, h, m.n,
                                              0, Rect{a.x, a.y, c, c}, m.new_begin, m.new_end});
            if (ImGui::IsWindowHovered() && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y &&
                mouse.y < b.y) {
                ImGui::SetTooltip(tr("layer %d, head %d"), l, h);
                if (ImGui::IsMouseClicked(0)) {
                    f.ui.settings.layer = l;
                    f.ui.settings.head = h;
                    // The row clicked, when the inside-attention panel is open.
                    if (x.open && m.n > 0)
                        open_inside_attention(
                            f.ui, x, 0, l, h,
                            std::clamp(int((mouse.y - a.y) / c * m.n), 0, m.n - 1));
                }
            }
        }
    }
}

// The layer, head and colour scale, each label with its control; a pair that no longer fits goes
// to the next line.
void draw_attention_controls(FrameContext& f, const ModelConfig& c) {
    const float fh = f.font_px;
    UiState& ui = f.ui;
    const float sp = ImGui::GetStyle().ItemSpacing.x;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("Layer"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 6);
    ImGui::SliderInt("##layer", &ui.settings.layer, 0, c.n_layers - 1);
    same_line_or_wrap(text_width(tr("Head"), fh) + sp + fh * 6);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("Head"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 6);
    ImGui::SliderInt("##head", &ui.settings.head, 0, c.n_heads - 1);
    same_line_or_wrap(text_width(tr("Colours"), fh) + sp + fh * 5);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("Colours"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 5);
    const char* scales[] = {"linear", "sqrt", "log"};
    const char* scale_names[] = {tr("linear"), tr("sqrt"), tr("log")};
    int sc = static_cast<int>(f.pal.scale);
    if (ImGui::Combo("##scale", &sc, scale_names, 3)) ui.settings.weight_scale = scales[sc];
}

// What the step shown computed: the prefill's rows at once, or a decode step's one new row.
void draw_step_rows(FrameContext& f, const StepRecord& st) {
    const float fh = f.font_px;
    char what[200];
    if (st.phase == Phase::Prefill)
        std::snprintf(what, sizeof what, tr("prefill: %d rows at once"), st.kv.len);
    else
        std::snprintf(what, sizeof what, tr("decode: 1 new row (%d keys)"), st.kv.len);
    same_line_or_wrap(text_width(what, fh), fh);
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    ImGui::TextUnformatted(what);
    ImGui::PopStyleColor();
}

// One large heatmap: the session, layer and head it shows.
struct HeatmapView {
    int si, layer, head;
};

// One large heatmap per session (compare mode: cached and uncached side by side); or, one
// session, the heads a lesson step compares side by side (lesson 7) while the head chosen is one
// of them.
std::vector<HeatmapView> attention_views(FrameContext& f, LessonUi& lesson, const ModelConfig& c) {
    const EngineSnapshot& snap = f.snap;
    std::vector<HeatmapView> views;
    for (int si = 0; si < static_cast<int>(snap.sessions.size()); ++si)
        views.push_back({si, f.ui.settings.layer, f.ui.settings.head});
    if (views.size() == 1) {
        const auto heads = lesson_step_heads(f, lesson);
        const bool chosen =
            std::find(heads.begin(), heads.end(),
                      std::make_pair(f.ui.settings.layer, f.ui.settings.head)) != heads.end();
        if (chosen) {
            views.clear();
            for (const auto& [l, h] : heads)
                if (l < c.n_layers && h < c.n_heads && views.size() < 2) views.push_back({0, l, h});
        }
    }
    return views;
}

// How tall heatmaps side by side, each main_w wide, are drawn: the lower bound of either label
// frame main_heatmap may pick, within the panel's height.
float heatmaps_height(float main_w, float avail_h, float room_h, float fh) {
    float heat_h = 0;
    for (bool pieces : {true, false}) {
        const HeatmapFrame hf = heatmap_frame(main_w - fh * 0.5f, avail_h, fh, pieces);
        heat_h = std::max(heat_h, hf.title_h + hf.top_h + hf.side + fh * 0.5f);
    }
    return std::min(heat_h, room_h);
}

}  // namespace

void draw_attention(FrameContext& f, AttentionPanel& panel, ExplainUi& explain, LessonUi& lesson) {
    const float fh = f.font_px;
    const EngineSnapshot& snap = f.snap;
    const Model* model = f.model();
    if (!model || snap.sessions.empty()) {
        ImGui::TextUnformatted(tr("No model open."));
        return;
    }
    const ModelConfig& c = model->config();
    UiState& ui = f.ui;
    ui.settings.layer = std::clamp(ui.settings.layer, 0, c.n_layers - 1);
    ui.settings.head = std::clamp(ui.settings.head, 0, c.n_heads - 1);

    draw_attention_controls(f, c);

    const SessionView& s0 = snap.sessions[0];
    const int s = shown_step(s0, f.step);
    if (s < 0) {
        ImGui::Spacing();
        ImGui::TextWrapped(
            "%s", tr("Nothing computed yet. Prefill (Space) runs the whole prompt through the "
                     "model at once: its attention appears here as a triangle, one row per prompt "
                     "token."));
        return;
    }
    const StepRecord& st = s0.trace.steps()[s];
    draw_step_rows(f, st);

    // Why K and V are cached and Q is not, measured at this step: without the cache (and in
    // compare mode for both sessions) a line per session.
    const bool any_uncached =
        std::any_of(snap.sessions.begin(), snap.sessions.end(), [&](const SessionView& sv) {
            const int k = shown_step(sv, f.step);
            return k >= 0 && sv.trace.steps()[k].mode == CacheMode::Uncached;
        });
    // The notes (the bidirectional view's measured |ΔK|, or each uncached session's why-not-Q
    // line) at `at`, `w` wide; measured only when `draw` is false. Returns their height.
    auto notes = [&](ImVec2 at, float w, bool draw) -> float {
        if (snap.cache == CacheView::Bidirectional) return draw_kv_deltas(f, at, w, draw);
        float y = 0;
        if (!any_uncached) return y;
        for (const SessionView& sv : snap.sessions) {
            const int k = shown_step(sv, f.step);
            if (k < 0) continue;
            const std::string line = why_not_q_words(sv.trace.steps()[k], ui.settings.layer,
                                                     c.n_layers, report_lang(f.ui.lang));
            if (line.empty()) continue;
            const std::string text = std::string(step_label(sv, k)) + ": " + line;
            const ImU32 col = sv.trace.steps()[k].mode == CacheMode::Uncached
                                  ? to_u32(f.pal.recomputed)
                                  : f.theme.muted_text;
            y += (draw ? put_wrapped(ImVec2(at.x, at.y + y), col, text, w)
                       : wrapped_height(text, w)) +
                 fh * 0.25f;
        }
        return y;
    };

    // Tokens by position (the prompt, then each step's choice), for the labels.
    std::vector<int> tokens = s0.prompt_tokens;
    for (const auto& r : s0.trace.steps()) tokens.push_back(r.token_out);

    const ImVec2 top = ImGui::GetCursorScreenPos();
    const ImVec2 room = ImGui::GetContentRegionAvail();
    const std::vector<HeatmapView> views = attention_views(f, lesson, c);
    const int n_views = static_cast<int>(views.size());
    // Where the notes go: above the heatmaps while that leaves them their size at the design
    // text height (f.reference); else in a column beside them when that does; else after them,
    // a scroll away, the heatmaps first at the size the panel gives them. Larger text never
    // draws the heatmaps smaller to make room for the notes.
    const float gap = fh * 0.5f;
    auto side_in = [&](float w, float h) {
        return attention_heat_side(Box{0, 0, w, h + frame_row_h(fh)}, fh, n_views);
    };
    const float ref = f.reference.heat_side;
    const float above_h = notes(top, room.x, false);
    const float col_w = std::floor(std::max(fh * 14, room.x * 0.34f));
    enum class NotesAt { Above, Beside, After } notes_at = NotesAt::Above;
    const float s_above = side_in(room.x, room.y - above_h);
    if (above_h > 0 && s_above + 0.5f < ref) {
        // The largest of the three (the panel has no scrollbar: after them is a wheel away).
        const float s_beside = room.x - col_w - gap > fh * 10 && notes(top, col_w, false) <= room.y
                                   ? side_in(room.x - col_w - gap, room.y)
                                   : 0;
        const float s_after = side_in(room.x, room.y);
        if (s_beside > s_above && s_beside >= s_after)
            notes_at = NotesAt::Beside;
        else if (s_after > s_above)
            notes_at = NotesAt::After;
    }
    ImVec2 origin = top, avail = room;
    if (notes_at == NotesAt::Above) {
        notes(top, room.x, true);
        origin.y += above_h;
        avail.y -= above_h;
    } else if (notes_at == NotesAt::Beside) {
        notes(ImVec2(top.x + room.x - col_w, top.y), col_w, true);
        avail.x -= col_w + gap;
    }  // After: under the heatmaps, once they are drawn
    // Shown alone (key 2), the heatmaps keep the side they have alone at the design text height
    // (f.reference): where the larger labels leave less height than that, the panel grows past
    // the window and scrolls, rather than drawing them smaller.
    if (f.ui.maximised == "attention" && ref > 0 && side_in(avail.x, avail.y) + 0.5f < ref) {
        const float need = ref + fh * (1.3f + 4.5f + 0.5f);  // title, piece labels, margin
        if (need > avail.y) avail.y = need;
    }
    // The large heatmaps side by side, the small multiples and the legend in a column at the
    // right (gui/views/panel_layout.h: the same geometry the stage measured).
    const bool grid =
        attention_small_multiples(Box{0, 0, avail.x, avail.y + frame_row_h(fh)}, fh, n_views);
    const float grid_w = grid ? small_multiples_w(avail.x, fh) : 0;
    const float main_w = (avail.x - grid_w - (grid ? fh * 0.5f : 0)) / n_views;
    // A lesson's two heads one above the other when the panel is tall enough that this makes
    // them larger (a narrow column of the stage); compare mode keeps the stage's side by side.
    const bool heads_mode = snap.sessions.size() == 1 && n_views > 1;
    const float all_w = avail.x - grid_w - (grid ? fh * 0.5f : 0);
    const bool stacked =
        heads_mode && std::min(all_w, avail.y / n_views) > std::min(main_w, avail.y);
    const AttentionMatrixRows m0 = collect_attention_rows(s0.trace.steps(), s);
    bool recomputed = false;
    for (int i = 0; i < n_views; ++i) {
        const HeatmapView& v = views[i];
        const SessionView& sv = snap.sessions[v.si];
        const int ss = shown_step(sv, f.step);
        const AttentionMatrixRows m = v.si == 0 ? m0 : collect_attention_rows(sv.trace.steps(), ss);
        const ImVec2 at = stacked ? ImVec2(origin.x, origin.y + i * avail.y / n_views)
                                  : ImVec2(origin.x + i * main_w, origin.y);
        const ImVec2 box = stacked ? ImVec2(all_w, avail.y / n_views - fh * 0.5f)
                                   : ImVec2(main_w - fh * 0.5f, avail.y);
        recomputed |= main_heatmap(f, explain, panel.zoom, v.si, m, v.layer, v.head, at, box,
                                   tokens, !heads_mode);
    }
    if (grid)
        small_multiples(f, explain, m0, ImVec2(origin.x + avail.x - grid_w, origin.y),
                        ImVec2(grid_w, avail.y), recomputed);
    float total_h = std::max(room.y, origin.y - top.y + avail.y);
    if (notes_at == NotesAt::After) {
        // Right under the heatmaps (the lower bound of either label frame main_heatmap may
        // pick), left of the small multiples' column.
        const float heat_h = stacked ? room.y : heatmaps_height(main_w, avail.y, room.y, fh);
        const float w = grid ? avail.x - grid_w - fh * 0.5f : room.x;
        total_h =
            std::max(total_h, heat_h + gap + notes(ImVec2(top.x, top.y + heat_h + gap), w, true));
    }
    ImGui::SetCursorScreenPos(top);
    ImGui::Dummy(ImVec2(room.x, total_h));
}

}  // namespace kvs::gui
