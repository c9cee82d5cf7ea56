// Inside attention: one query row of one (layer, head) as the arithmetic the tutorials write,
//     out = softmax(q · Kᵀ / √d_k + mask) · V,
// with this row's own numbers (core/session/attention_explain.h, built from the trace). Left to
// right: the query rows q_j [T, d_k] (the row shown; the earlier positions' rows were never kept,
// or, without the cache, recomputed and not kept); the K rows [T, d_k], each marked cached / new /
// recomputed; the raw scores q·k_j; the same ×1/√d_k; the mask; the softmax weights; the V rows
// [T, d_v]; the output Σ_j w_j·v_j. One row of the diagram per key j, its numbers at the text
// size. The row can be stepped through stage by stage (S; A plays them): each stage adds its
// column, like a slide build. At the prefill a square beside it shows the stage's whole
// [T, T] matrix (the triangle), at a decode step its one row. In compare mode the two sessions
// are drawn side by side. Every text it draws is recorded for --layout-json.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "core/model/toy_model.h"
#include "core/session/projection_explain.h"
#include "core/session/step_rows.h"
#include "core/session/why_not_q.h"
#include "core/util/format.h"
#include "core/util/numbering.h"
#include "gui/draw/text.h"
#include "gui/panels/inside_attention.h"
#include "gui/panels/inside_projection.h"
#include "gui/state/options.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "gui/views/inside_attention_text.h"
#include "gui/views/panel_layout.h"
#include "lessonlib/why_not_q_words.h"

namespace kvs::gui {
static_assert(kExplainStages == kPanelStages, "the options' stage numbers are the panel's");
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

ImU32 text_on(Rgba bg) {
    return to_u32(ink_on(bg));
}

float max_abs(const float* v, std::size_t n) {
    float m = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (std::isfinite(v[i])) m = std::max(m, std::fabs(v[i]));
    return m > 0 ? m : 1.0f;
}
float max_abs(const std::vector<float>& v) {
    return max_abs(v.data(), v.size());
}

bool inside(ImVec2 m, ImVec2 a, ImVec2 b) {
    return m.x >= a.x && m.x < b.x && m.y >= a.y && m.y < b.y;
}

// The diagram's columns, left to right, and the stage each appears at.
enum Col { Label, QRows, KRows, Raw, Scaled, Mask, Weight, VRows, Out, kCols };
constexpr int kColStage[kCols] = {0, 0, 0, 1, 2, 3, 4, 5, 6};

// Where each of the earlier positions' query rows went, as the q column draws it.
enum class QRowFate { Computed, NeverKept, Rebuilt, ThrownAway };

// One session's row: the breakdown and what the panel needs around it.
struct RowView {
    const SessionView* sv = nullptr;
    const StepRecord* step = nullptr;
    std::optional<AttentionExplain> e;
    // Every kept row of the step at this layer and head (core/session/attention_explain.h): the
    // q column's rows and the stage's matrix, the same numbers as the row's.
    std::optional<AttentionBlock> block;
    ExplainRowRecord* record = nullptr;  // where --layout-json records this row as drawn
    std::string why;
    std::vector<int> tokens;  // by position: the prompt, then each step's choice
};

// The diagram of one row: one line per key from `first` to e.n_keys - 1, in the box (o, size).
struct Diagram {
    FrameContext& f;
    const RowView& rv;
    int stage;  // -1: all
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float budget_w = 0;  // the width the columns may take (the rest: the stage's matrix)
    float fh = f.font_px;

    const AttentionExplain& e() const { return *rv.e; }
    std::string token_label(int j) const {
        return f.label(j < static_cast<int>(rv.tokens.size()) ? rv.tokens[j] : -1);
    }
    // A key's line: its position (from 1, core/util/numbering.h) and its token, "8 ·was".
    std::string key_label(int j) const {
        return std::to_string(position_of_index(j)) + " " + token_label(j);
    }
    bool shown(int c) const { return stage < 0 || stage >= kColStage[c]; }
    // The column the current stage adds (its header in the highlight colour).
    bool added(int c) const { return stage >= 0 && stage == kColStage[c]; }

    // What the model did with the query at token index j at this step: the newest row leads to
    // the next token (and every prefill row builds the cache); a cached step computed no other;
    // an uncached step computed each earlier one again, to rebuild the next layer's K/V or for
    // nothing (the last layer). The row shown is one of these too.
    QRowFate fate(int j) const {
        const AttentionExplain& x = e();
        const int newest = rv.step ? rv.step->kv.len - 1 : x.q_pos;
        if (x.phase == Phase::Prefill || j == newest) return QRowFate::Computed;
        if (x.mode == CacheMode::Cached) return QRowFate::NeverKept;
        const int layers = f.model() ? f.model()->config().n_layers : 1;
        return x.layer + 1 < layers ? QRowFate::Rebuilt : QRowFate::ThrownAway;
    }
    // q of the query at token index j at this step, where the step kept that row (the prefill
    // and an uncached step keep every row): the block's row, as core gives it.
    const float* q_of(int j) const {
        const auto& b = rv.block;
        if (!b || b->q.empty()) return nullptr;
        const int row = j - b->q_pos0;
        if (row < 0 || row >= b->rows) return nullptr;
        return b->q.data() + std::size_t(row) * b->head_dim;
    }

    // The height that draws every key's row with its numbers, `width` wide.
    float need_h(float width) {
        return fh * 0.75f * 2.4f + e().n_keys * fh * 1.15f + legend(ImVec2(0, 0), width, false) +
               fh * 0.3f;
    }

    // The diagram grows with the room it has (a panel shown alone: the whole window), its
    // rows, columns and numbers up to `max_z` times the text size, as long as every row keeps
    // its numbers. Returns the height it then needs, `size.x` wide.
    float fit(ImVec2 size, float max_z) {
        const float base = f.font_px;
        const int keys = std::max(e().n_keys, 1);
        const float rows_room = size.y - base * (0.75f * 2.4f + 4.2f);
        // A stage of the scores keeps a third of the width for its whole matrix (the prefill's
        // triangle).
        const bool matrix = stage >= 1 && stage <= 4 && rv.block && rv.block->rows > 1;
        const float width = matrix ? size.x * 0.66f : size.x;
        float z =
            std::clamp(std::min(rows_room / (keys * base * 1.35f), width / inside_need_w(base, 1)),
                       1.0f, std::max(max_z, 1.0f));
        // Smaller until every row keeps its numbers (the legend grows with it too) and the
        // columns their width.
        const std::vector<ExplainColumn> cols = explain_columns(e());
        for (; z > 1.0f; z = std::max(1.0f, z - 1.0f / base)) {  // a pixel at a time
            fh = base * z;
            numbers = true;
            pad = fh * 0.4f;
            budget_w = width;
            const float used = layout_columns(cols, 0, 0, fh * 0.75f, fh * 0.35f).used_w;
            if (need_h(size.x) + fh * 0.2f * keys <= size.y && used <= width) break;
        }
        fh = base * z;
        budget_w = width;
        return need_h(size.x) + (z > 1.0f ? fh * 0.2f * keys : 0.0f);
    }

    // Where each column goes: its x and width, the width q, K, V and the output share, and the
    // width all take.
    struct ColumnLayout {
        float widths[kCols];
        float x[kCols];
        float mat_w = 0, used_w = 0;
    };
    ColumnLayout layout_columns(const std::vector<ExplainColumn>& cols, float x0, int first,
                                float hp, float gap) const {
        const AttentionExplain& x = e();
        const int T = x.n_keys, dk = x.head_dim;
        const int dv = T > 0 ? static_cast<int>(x.v.size()) / T : 0;
        ColumnLayout lay;
        // Widths: each number column as wide as its widest number or header; the label column
        // as its widest label (at most 6 text heights); q, K, V and the output share the rest.
        auto widest = [&](int c, const std::vector<float>& vals, float px) {
            float w = std::max(text_width(cols[c - 1].name, hp), text_width(cols[c - 1].shape, hp));
            if (numbers)
                for (int j = first; j < T; ++j)
                    w = std::max(w, text_width(fmt_number(vals[j]), px));
            return w + pad;
        };
        float* widths = lay.widths;
        float label_need = 0;
        for (int j = first; j < T && numbers; ++j)
            label_need = std::max(label_need, text_width(key_label(j), fh));
        widths[Label] = numbers ? std::min(label_need + pad, fh * 6.0f) : fh * 2.5f;
        widths[Raw] = widest(Raw, x.raw, fh);
        widths[Scaled] = widest(Scaled, x.scaled, fh);
        widths[Mask] = std::max({text_width(cols[Mask - 1].name, hp),
                                 text_width(cols[Mask - 1].shape, hp), text_width("−∞", fh)}) +
                       pad;
        widths[Weight] = widest(Weight, x.weights, fh);
        float fixed = widths[Label] + widths[Raw] + widths[Scaled] + widths[Mask] + widths[Weight] +
                      (kCols - 1) * gap;
        // q, K, V and the output share one width so that their channels line up.
        const bool scalar = dk == 1 && dv == 1;
        float mat_min = 0;
        for (int c : {QRows, KRows, VRows, Out})
            mat_min = std::max({mat_min, text_width(cols[c - 1].name, hp),
                                text_width(cols[c - 1].shape, hp) + pad});
        if (scalar) mat_min = std::max(mat_min, text_width("-00.00", fh) + pad);
        // Narrower than the headers want only when the panel is: the headers are then cut short.
        lay.mat_w = std::clamp((budget_w - fixed) / 4, std::min(mat_min, fh * 1.5f), fh * 6.0f);
        widths[QRows] = widths[KRows] = widths[VRows] = widths[Out] = lay.mat_w;
        float* col_x = lay.x;
        float xx = x0;
        for (int c = 0; c < kCols; ++c) {
            col_x[c] = xx;
            xx += widths[c] + gap;
        }
        lay.used_w = xx - gap - x0;
        return lay;
    }

    // How the query row at [a, b] was left by this step: an empty outline where no cache keeps it,
    // hatched where it was computed again (crossed out where it is thrown away).
    void mark_q_fate(QRowFate fr, ImVec2 a, ImVec2 b, float line_w) {
        if (fr == QRowFate::NeverKept) {
            // An empty outline: no cache keeps it, no later step reads it.
            const float dash = std::max(3.0f, fh * 0.35f);
            for (float xd = a.x; xd < b.x; xd += dash * 2) {
                const float x1 = std::min(xd + dash, b.x);
                dl->AddLine(ImVec2(xd, a.y + 0.5f), ImVec2(x1, a.y + 0.5f), f.theme.axis, line_w);
                dl->AddLine(ImVec2(xd, b.y - 0.5f), ImVec2(x1, b.y - 0.5f), f.theme.axis, line_w);
            }
        } else if (fr == QRowFate::Rebuilt || fr == QRowFate::ThrownAway) {
            // Computed again at this step for the next layer's K/V or for nothing:
            // hatched in the recomputed colour (crossed out where it is thrown away).
            const ImU32 rc = to_u32(f.pal.recomputed);
            dl->AddRect(a, b, rc, 0, 0, line_w);
            const float step_x = std::max(4.0f, fh * 0.5f);
            for (float xd = a.x; xd < b.x; xd += step_x)
                dl->AddLine(ImVec2(xd, b.y), ImVec2(std::min(xd + (b.y - a.y), b.x), a.y), rc,
                            line_w);
            if (fr == QRowFate::ThrownAway) dl->AddLine(a, b, rc, line_w * 2);
        }
    }

    // Where the rows of draw_at go: the columns, the first row's top, each row's pitch and the
    // height drawn, the bars and lines, the first key drawn, the colour scales of q, K and V.
    struct RowGeometry {
        ColumnLayout lay;
        ImVec2 o;
        float y0, rh, h, area_h, bar_w, line_w;
        int first;
        float q_scale, k_scale, v_scale;
        float gap;
        float row_y(int j) const { return y0 + (j - first) * rh; }
    };
    // The hover of this frame (the tooltip collects what is under the mouse) and whether rows
    // are tall enough for their numbers, with the cells' padding.
    ImVec2 mouse = {};
    bool hovered = false;
    std::string tip = {};
    bool numbers = false;
    float pad = 0;

    // A strip of values: `n` channels across `w`, coloured by sign and size; with one
    // channel, the number itself.
    void cells(float cx, float cy, float w, float h, const float* vals, int n, float scale,
               const char* what, int j) {
        const float cw = w / n;
        for (int i = 0; i < n; ++i) {
            const ImVec2 a(cx + i * cw, cy), b(cx + (i + 1) * cw, cy + h);
            const Rgba c = signed_colour(vals[i], scale);
            dl->AddRectFilled(a, ImVec2(std::max(b.x, a.x + 1), b.y), to_u32(c));
            if (n == 1 && numbers)
                put_text(ImVec2(a.x + pad * 0.5f, a.y + (h - fh) * 0.5f), text_on(c),
                         fmt_number(vals[i]), fh);
            if (hovered && inside(mouse, a, b)) {
                char b2[160];
                std::snprintf(b2, sizeof b2, tr("%s at position %d, channel %d: %s"), what,
                              position_of_index(j), i, fmt_number(vals[i]).c_str());
                tip = b2;
            }
        }
    }

    // A column of one number per key, on a background colour.
    void number_cell(const RowGeometry& g, int c, int j, float v, Rgba bg, const std::string& text,
                     const char* what) {
        const ImVec2 a(g.lay.x[c], g.row_y(j)), b(g.lay.x[c] + g.lay.widths[c], g.row_y(j) + g.rh);
        dl->AddRectFilled(a, ImVec2(b.x, std::max(b.y - 1, a.y + 1)), to_u32(bg));
        if (numbers)
            put_text(ImVec2(a.x + pad * 0.5f, a.y + (g.rh - fh) * 0.5f), text_on(bg), text, fh);
        if (hovered && inside(mouse, a, b)) {
            char b2[200];
            std::snprintf(b2, sizeof b2, tr("%s, key at position %d \"%s\": %s"), what,
                          position_of_index(j), token_label(j).c_str(), fmt_number(v).c_str());
            tip = b2;
        }
    }

    // The row of the key at token index j: its label, the query row of that position as the step
    // left it, its K and V with where they came from, then its score, scaled score, mask and
    // weight, as far as the stage shows them.
    void draw_key_row(int j, const RowGeometry& g) {
        const AttentionExplain& x = e();
        const int T = x.n_keys, dk = x.head_dim;
        const int dv = static_cast<int>(x.v.size()) / T;
        ExplainRowRecord* record = rv.record;
        const float y = g.row_y(j);
        const bool masked = j < static_cast<int>(x.masked.size()) && x.masked[j];
        if (record) {
            record->key_labels.push_back(key_label(j));
            if (shown(Raw)) record->raw.push_back(x.raw[j]);
            if (shown(Scaled)) record->scaled.push_back(x.scaled[j]);
            if (shown(Mask)) record->masked.push_back(masked ? 1 : 0);
            if (shown(Weight)) record->weights.push_back(x.weights[j]);
        }
        // Key label: position and token; the query's own position marked.
        if (numbers) {
            put_text(ImVec2(g.o.x, y + (g.rh - fh) * 0.5f),
                     j == x.q_pos ? ImGui::GetColorU32(ImGuiCol_Text) : f.theme.muted_text,
                     clipped(key_label(j), g.lay.widths[Label] - pad * 0.5f, fh), fh);
        } else if (j == g.first || j == T - 1 || (j % 50) == 0) {
            put_text(ImVec2(g.o.x, std::min(y, g.y0 + g.area_h - fh)), f.theme.muted_text,
                     std::to_string(position_of_index(j)), fh);
        }
        // The query row of position j: the one shown; the others as this step left them.
        if (!x.scores_by_rule) {
            const QRowFate fr = fate(j);
            const ImVec2 a(g.lay.x[QRows], y), b(g.lay.x[QRows] + g.lay.mat_w, y + g.h);
            // Its values where the trace kept the row (an uncached step keeps the rows it
            // recomputed: they are drawn, then hatched as what the model did with them).
            const float* q = fr == QRowFate::NeverKept ? nullptr : q_of(j);
            if (q) cells(a.x, a.y, g.lay.mat_w, g.h, q, dk, g.q_scale, "q", j);
            if (q && j == x.q_pos && rv.block && rv.block->rows > 1)
                dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1),
                            to_u32(f.pal.highlight), 0, 0, g.line_w * 2);
            mark_q_fate(fr, a, b, g.line_w);
            if (hovered && inside(mouse, a, b) && tip.empty())
                tip = std::string("q ") + std::to_string(position_of_index(j)) + ": " +
                      q_fate_words(fr);
        } else if (j == x.q_pos) {
            // Within its column (short of the K rows' source bar), abbreviated if need be.
            put_text(ImVec2(g.lay.x[QRows], y + (g.rh - fh) * 0.5f), f.theme.muted_text,
                     clipped(tr("(rule)"), g.lay.widths[QRows] + g.gap - g.bar_w - 2, fh), fh);
        }
        // K and V rows, each with a bar in the colour of where it came from.
        const KvSource src = j < static_cast<int>(x.source.size()) ? x.source[j] : KvSource::Cached;
        const ImU32 sc = to_u32(source_colour(f.pal, src));
        for (int c : {int(KRows), int(VRows)}) {
            if (!shown(c)) continue;
            dl->AddRectFilled(ImVec2(g.lay.x[c] - g.bar_w - 1, y), ImVec2(g.lay.x[c] - 1, y + g.h),
                              sc);
            if (hovered &&
                inside(mouse, ImVec2(g.lay.x[c] - g.bar_w - 1, y), ImVec2(g.lay.x[c], y + g.rh))) {
                char b2[200];
                std::snprintf(b2, sizeof b2, tr("key at position %d: %s"), position_of_index(j),
                              source_words(src));
                tip = b2;
            }
        }
        cells(g.lay.x[KRows], y, g.lay.mat_w, g.h, x.k.data() + std::size_t(j) * dk, dk, g.k_scale,
              "K", j);
        // The stage of the K rows outlines the one this step wrote to the cache.
        if (added(KRows) && src == KvSource::New)
            dl->AddRect(ImVec2(g.lay.x[KRows] - 1, y - 1),
                        ImVec2(g.lay.x[KRows] + g.lay.mat_w + 1, y + g.h + 1), sc, 0, 0,
                        g.line_w * 2);
        if (shown(VRows))
            cells(g.lay.x[VRows], y, g.lay.mat_w, g.h, x.v.data() + std::size_t(j) * dv, dv,
                  g.v_scale, "V", j);
        // Scores, scaled scores, mask, weights.
        const float raw = x.raw[j], scaled = x.scaled[j];
        const Rgba neutral = f.theme.dark ? Rgba{45, 45, 50, 255} : Rgba{235, 235, 238, 255};
        if (shown(Raw))
            number_cell(g, Raw, j, raw, std::isinf(raw) ? f.pal.mask : neutral, fmt_number(raw),
                        "q·k_j");
        if (shown(Scaled))
            number_cell(g, Scaled, j, scaled, std::isinf(scaled) ? f.pal.mask : neutral,
                        fmt_number(scaled), tr("scaled score"));
        if (shown(Mask))
            number_cell(g, Mask, j, masked ? -INFINITY : 0.0f, masked ? f.pal.mask : neutral,
                        masked ? "−∞" : "+0", tr("mask"));
        if (shown(Weight)) {
            const float w = x.weights[j];
            number_cell(g, Weight, j, w,
                        masked || x.empty_row ? f.pal.mask : weight_colour(w, f.pal.scale),
                        fmt_number(w), tr("weight"));
        }
    }

    float draw_at(ImVec2 o, ImVec2 size) {
        const AttentionExplain& x = e();
        const int T = x.n_keys;
        const int dv = T > 0 ? static_cast<int>(x.v.size()) / T : 0;
        if (T <= 0 || dv <= 0) return 0;
        const std::vector<ExplainColumn> cols = explain_columns(x);
        // Headers and shapes a little smaller than the numbers; the numbers at the text size.
        const float hp = fh * 0.75f;
        const float header_h = hp * 2.4f;
        const float legend_h = legend(ImVec2(o.x, o.y), size.x, false) + fh * 0.3f;
        const float area_h = size.y - header_h - legend_h;
        if (area_h < fh * 2) return 0;
        // Rows tall enough to read (numbers in every cell), else thin rows of colour only (hover
        // for the numbers); past one pixel a row, only the newest keys.
        numbers = T * fh * 1.15f <= area_h;
        pad = fh * 0.4f;
        float rh = numbers ? std::min(fh * 1.35f, area_h / T) : area_h / T;
        int first = 0;
        if (rh < 1.5f) {
            rh = 1.5f;
            first = T - static_cast<int>(area_h / rh);
        }
        const float gap = fh * 0.35f;
        const ColumnLayout lay = layout_columns(cols, o.x, first, hp, gap);
        const float* widths = lay.widths;
        const float* col_x = lay.x;
        const float mat_w = lay.mat_w, used_w = lay.used_w;
        const float bar_w = std::max(3.0f, fh * 0.4f);
        // Headers: the quantity and its shape in the tutorials' notation.
        for (int c = 1; c < kCols; ++c) {
            if (!shown(c)) continue;
            const ImU32 hc = added(c) ? to_u32(f.pal.highlight) : ImGui::GetColorU32(ImGuiCol_Text);
            const float cw = widths[c] + gap * 0.5f;
            put_text(ImVec2(col_x[c], o.y), hc, clipped(cols[c - 1].name, cw, hp), hp);
            put_text(ImVec2(col_x[c], o.y + hp * 1.15f), f.theme.muted_text,
                     clipped(cols[c - 1].shape, cw, hp), hp);
        }
        const float y0 = o.y + header_h;
        auto row_y = [&](int j) { return y0 + (j - first) * rh; };
        const float out_scale = max_abs(x.output);
        mouse = ImGui::GetIO().MousePos;
        hovered = ImGui::IsWindowHovered();
        tip.clear();

        const RowGeometry g{lay,
                            o,
                            y0,
                            rh,
                            std::max(1.0f, numbers ? rh - 1 : rh),
                            area_h,
                            bar_w,
                            std::max(1.0f, fh * 0.08f),
                            first,
                            std::max(max_abs(x.q), 1e-6f),
                            max_abs(x.k),
                            max_abs(x.v),
                            gap};
        // Recorded for --layout-json: the first session's row, each column as far as the stage
        // shows it.
        ExplainRowRecord* record = rv.record;
        if (record) {
            record->number_px = fh;
            record->key_labels.clear();
            record->raw.clear();
            record->scaled.clear();
            record->masked.clear();
            record->weights.clear();
        }
        for (int j = first; j < T; ++j) draw_key_row(j, g);
        // The output: one strip, level with the query's own key.
        if (shown(Out)) {
            const float oy = row_y(std::clamp(x.q_pos, first, T - 1));
            if (x.empty_row)
                put_text(ImVec2(col_x[Out], oy + (rh - fh) * 0.5f), f.theme.muted_text, tr("none"),
                         fh);
            else if (static_cast<int>(x.output.size()) == dv)
                cells(col_x[Out], oy, mat_w, std::max(g.h, numbers ? g.h : fh), x.output.data(), dv,
                      out_scale, tr("output"), x.q_pos);
        }
        if (first > 0) {
            char b[96];
            std::snprintf(b, sizeof b, tr("keys at positions 1..%d not drawn (no room)"), first);
            put_text(ImVec2(o.x, y0 + area_h + fh * 0.1f), f.theme.muted_text, b, fh);
        }
        // The stage's whole matrix beside the diagram, where there is room: [T, T] at the
        // prefill (the triangle), the one row at a decode step.
        const float room = o.x + size.x - (o.x + used_w) - gap * 2;
        if (room >= fh * 5 && stage >= 1 && stage <= 4)
            stage_matrix(ImVec2(o.x + used_w + gap * 2, o.y),
                         std::min(room, std::max(area_h + header_h - fh * 1.5f, fh * 4)));
        legend(ImVec2(o.x, o.y + size.y - legend_h + fh * 0.3f), size.x, true);
        if (!tip.empty()) ImGui::SetTooltip("%s", tip.c_str());
        return used_w;
    }

    static const char* q_fate_words(QRowFate fr) {
        switch (fr) {
            case QRowFate::Computed:
                return tr("computed at this step");
            case QRowFate::NeverKept:
                return tr("never kept: no later step reads it");
            case QRowFate::Rebuilt:
                return tr("recomputed, only to rebuild the next layer's K/V");
            case QRowFate::ThrownAway:
                return tr("recomputed and thrown away: nothing reads it");
        }
        return "";
    }

    // The matrix of the current stage for every query row the step kept (the prefill and an
    // uncached step: all), keys across, in a square of `side` at `at`: q·k, scaled, masked, or
    // the weights, each cell the block's number (core's, the same as the row's table).
    void stage_matrix(ImVec2 at, float side) {
        if (!rv.block) return;
        const AttentionBlock& b = *rv.block;
        const AttentionExplain& x = e();
        const int T = b.n_keys, rows = b.rows;
        if (rows <= 0 || T <= 0 || T > 256) return;
        char title[64];
        std::snprintf(title, sizeof title, "[%d, %d]", rows, T);
        put_text(at, f.theme.muted_text, title, fh * 0.85f);
        const float top = at.y + fh * 1.2f;
        const float cell = std::floor(std::min(side / T, (side - fh * 1.2f) / std::max(rows, 1)));
        if (cell < 2) return;
        const float num_px = std::min(fh * 0.85f, cell * 0.4f);
        // Recorded for --layout-json: the first session's matrix.
        ExplainRowRecord* record = rv.record;
        if (record) record->matrix.clear();
        float mx = 1e-9f;
        for (int i = 0; i < rows; ++i)
            for (int j = 0; j < T; ++j)
                if (const float v = b.stage_value(stage, i, j); std::isfinite(v))
                    mx = std::max(mx, std::fabs(v));
        for (int i = 0; i < rows; ++i)
            for (int j = 0; j < T; ++j) {
                const float v = b.stage_value(stage, i, j);
                const bool masked = b.masked[b.at(i, j)] != 0;
                const ImVec2 p0(at.x + j * cell, top + i * cell),
                    p1(p0.x + cell - 1, p0.y + cell - 1);
                Rgba c = f.pal.mask;
                if (stage == 4 && std::isfinite(v))
                    c = weight_colour(v, f.pal.scale);
                else if (std::isfinite(v))
                    c = signed_colour(v, mx);
                else if (std::isnan(v) && !masked)
                    c = f.pal.empty_row;
                dl->AddRectFilled(p0, p1, to_u32(c));
                // The number where it fits the cell (3 significant digits, else 2, else 1).
                char t[24];
                std::snprintf(t, sizeof t, "%.3g", static_cast<double>(v));
                if (text_width(t, num_px) > cell - fh * 0.2f)
                    std::snprintf(t, sizeof t, "%.2g", static_cast<double>(v));
                if (text_width(t, num_px) > cell - fh * 0.2f)
                    std::snprintf(t, sizeof t, "%.1g", static_cast<double>(v));
                const std::string txt = std::isinf(v) ? fmt_number(v) : std::string(t);
                if (!std::isnan(v) && num_px >= fh * 0.5f &&
                    text_width(txt, num_px) <= cell - fh * 0.2f)
                    put_text(ImVec2(p0.x + fh * 0.1f, p0.y + (cell - num_px) * 0.5f), text_on(c),
                             txt, num_px);
                if (record) record->matrix.push_back(v);
            }
        if (record) {
            record->matrix_rows = rows;
            record->matrix_keys = T;
            record->matrix_first_position = position_of_index(b.q_pos0);
            record->matrix_masked =
                static_cast<int>(std::count(b.masked.begin(), b.masked.end(), 1));
        }
        // The row the diagram shows.
        const int shown_row = x.q_pos - b.q_pos0;
        if (shown_row >= 0 && shown_row < rows)
            dl->AddRect(ImVec2(at.x - 1, top + shown_row * cell - 1),
                        ImVec2(at.x + T * cell, top + (shown_row + 1) * cell),
                        to_u32(f.pal.highlight), 0, 0, std::max(2.0f, fh * 0.12f));
    }

    // Where each K/V row came from, and what became of the earlier query rows: swatch and words,
    // wrapped onto a second line when the width runs out.
    // Returns its height.
    float legend(ImVec2 at, float width, bool draw) {
        const AttentionExplain& x = e();
        struct Item {
            Rgba colour;
            std::string words;
            bool outline;
        };
        std::vector<Item> items;
        for (KvSource s : {KvSource::Cached, KvSource::New, KvSource::Recomputed}) {
            const bool present = std::find(x.source.begin(), x.source.end(), s) != x.source.end();
            if (present) items.push_back({source_colour(f.pal, s), source_words(s), false});
        }
        if (!x.scores_by_rule && x.phase == Phase::Decode && x.q_pos > 0) {
            const QRowFate fr = fate(0);
            std::string w = std::string(tr("earlier q rows")) +
                            (f.ui.lang == Lang::Zh ? "：" : ": ") + q_fate_words(fr);
            items.push_back({fr == QRowFate::NeverKept ? Rgba{} : f.pal.recomputed, w, true});
        }
        float lx = at.x, ly = at.y;
        const float sw = fh * 0.8f;
        for (const Item& it : items) {
            const float w = sw + fh * 0.3f + text_width(it.words, fh);
            if (lx > at.x && lx + w > at.x + width) {
                lx = at.x;
                ly += fh * 1.3f;
            }
            const ImVec2 a(lx, ly + fh * 0.15f), b(lx + sw, ly + fh * 0.95f);
            if (draw) {
                if (it.outline)
                    dl->AddRect(a, b, it.colour.a ? to_u32(it.colour) : f.theme.axis, 0, 0,
                                std::max(1.0f, fh * 0.08f));
                else
                    dl->AddRectFilled(a, b, to_u32(it.colour));
                put_text(ImVec2(lx + sw + fh * 0.3f, ly), f.theme.muted_text,
                         clipped(it.words, at.x + width - (lx + sw + fh * 0.3f), fh), fh);
            }
            lx += w + fh * 1.2f;
        }
        return ly - at.y + fh * 1.3f;
    }
};

// The row shown of session `si`: the step and row the panel's choice resolves to, and its
// breakdown (or why there is none).
RowView row_view(FrameContext& f, const ExplainUi& x, int si) {
    RowView rv;
    const ModelConfig& c = f.model()->config();
    const SessionView& sv = f.snap.sessions[si];
    rv.sv = &sv;
    const int s = shown_step(sv, f.step);
    const auto where = s < 0 ? std::nullopt : query_row_at(sv.trace.steps(), s, x.q_pos);
    if (!where) {
        rv.why = s < 0 ? tr("Nothing computed yet: step the model (Space), then pick a row.")
                       : no_query_row_words(sv.trace.steps(), s, x.q_pos);
        return rv;
    }
    rv.e = explain_attention(sv.trace, c, where->step, x.layer, x.head, where->row, &rv.why);
    if (rv.e) {
        rv.step = &sv.trace.steps()[rv.e->step];
        rv.block = explain_attention_block(sv.trace, c, rv.e->step, x.layer, x.head, nullptr);
    }
    rv.tokens = sv.prompt_tokens;
    for (const auto& r : sv.trace.steps()) rv.tokens.push_back(r.token_out);
    return rv;
}

// Where this row is: layer, head (the toy's by its rule's name), query, step, phase and cache.
std::string row_title(FrameContext& f, const RowView& rv, bool name_session) {
    const AttentionExplain& e = *rv.e;
    const std::string q_tok =
        f.label(e.q_pos < static_cast<int>(rv.tokens.size()) ? rv.tokens[e.q_pos] : -1);
    char head_name[64];
    if (f.model()->is_toy())
        std::snprintf(head_name, sizeof head_name, "%d (%s)", e.head, toy_head_name(e.head));
    else
        std::snprintf(head_name, sizeof head_name, "%d", e.head);
    char title[400];
    std::snprintf(title, sizeof title, tr("layer %d, head %s, %s \"%s\": step %d (%s, %s)"),
                  e.layer, head_name, query_row_label(e.q_pos).c_str(), q_tok.c_str(), e.step,
                  e.phase == Phase::Prefill ? tr("prefill") : tr("decode"),
                  e.mode == CacheMode::Cached ? tr("with KV cache") : tr("without KV cache"));
    std::string head = title;
    if (name_session) head = std::string(step_label(*rv.sv, e.step)) + ": " + head;
    return head;
}

// The stage line: every stage at once, or the stage shown (what it adds, its shape, why it
// changes nothing where it does not), then the keys.
std::string stage_line(const RowView& rv, const ProjectionInput& pin, int stage) {
    const AttentionExplain& e = *rv.e;
    std::string line;
    if (stage < 0) {
        line = tr("every stage at once");
    } else {
        char b[96];
        std::snprintf(b, sizeof b, tr("stage %d of %d"), stage + 1, kExplainStages);
        line = b;
        if (is_projection_stage(stage)) {
            line += std::string(": ") + tr(projection_stage_name(stage));
            if (pin.pe) line += "   " + projection_stage_shape(*pin.pe, stage);
        } else {
            const int a = attention_stage(stage);
            const char* name = a == 3 && e.mask == AttentionMask::Bidirectional
                                   ? tr("the mask (none without the causal mask)")
                                   : tr(explain_stage_name(a));
            line += std::string(": ") + name + "   " + explain_stage_shape(e, a);
            if (const std::string note = explain_stage_note(e, a); !note.empty())
                line += "   " + note;
        }
    }
    return line + "   " + tr("S: stage, A: play, Up/Down: row, I: close");
}

// What the projection stages draw for this row: core's projection of the row, the weight rows
// of the stage's matrix, and each key's source and label.
ProjectionInput projection_input(FrameContext& f, const RowView& rv, ExplainUi& x, int stage) {
    ProjectionInput in;
    const AttentionExplain& e = *rv.e;
    in.pe = explain_projection(rv.sv->trace, f.model()->config(), e.step, e.layer, e.head, e.row,
                               &in.why);
    if (const auto kind = projection_stage_matrix(stage); kind && in.pe)
        in.strip =
            cached_weight_strip(x.strips, *f.model(), *kind, e.layer, e.head, 256, &in.strip_why);
    in.sources = e.source;
    return in;
}

// The least height of one row's lines and diagram at the text size, `width` wide: what the panel
// keeps for it (more scrolls).
float row_need_h(FrameContext& f, const RowView& rv, ExplainUi& x, int stage, float width,
                 bool name_session) {
    const float fh = f.font_px;
    if (!rv.e) return wrapped_height(rv.why, width);
    const ProjectionInput pin =
        is_projection_stage(stage) ? projection_input(f, rv, x, stage) : ProjectionInput{};
    float h = wrapped_height(row_title(f, rv, name_session), width) + fh * 1.55f;
    if (stage >= 0) h += wrapped_height(stage_line(rv, pin, stage), width);
    if (is_projection_stage(stage))
        return h + fh * 0.4f + projection_stage_need(f, pin, stage, width);
    Diagram probe{f, rv, attention_stage(stage)};
    return h + fh * 0.4f + probe.need_h(width);
}

// The lines above the diagram of one row and the diagram (or a projection stage), in the box
// (o, size). Shown alone, the diagram takes the room first and grows up to 4 times the text
// size, the lines that repeat it following where room is left; else up to twice, after them.
void draw_row(FrameContext& f, const RowView& rv, ExplainUi& x, ImVec2 o, ImVec2 size,
              bool name_session, bool alone, ProjectionRecord* proj_record) {
    const float fh = f.font_px;
    const Model* model = f.model();
    const int stage = x.stage;
    if (!rv.e) {
        put_wrapped(o, f.theme.muted_text, rv.why, size.x);
        return;
    }
    const AttentionExplain& e = *rv.e;
    float y = o.y;
    const float bottom = o.y + size.y;
    // Lines past the box's bottom (a squeezed stage) are left out, never cut.
    auto room_for = [&](float h) { return y + h <= bottom; };
    const std::string head = row_title(f, rv, name_session);
    if (!room_for(wrapped_height(head, size.x))) return;
    y += put_wrapped(ImVec2(o.x, y), ImGui::GetColorU32(ImGuiCol_Text), head, size.x);
    if (!room_for(fh * 1.55f)) return;
    put_text(ImVec2(o.x, y), ImGui::GetColorU32(ImGuiCol_Text),
             clipped(kAttentionFormula, size.x, fh * 1.3f), fh * 1.3f);
    y += fh * 1.55f;
    const ProjectionInput pin =
        is_projection_stage(stage) ? projection_input(f, rv, x, stage) : ProjectionInput{};
    const int astage = attention_stage(stage);
    Diagram diagram{f, rv, astage};
    {
        // Every stage at once, the line is a hint only: left out where the diagram needs the
        // height for its numbers, and shown alone (a stage shown keeps it: it says which).
        std::string line = stage_line(rv, pin, stage);
        const float need_below = is_projection_stage(stage)
                                     ? projection_stage_need(f, pin, stage, size.x)
                                     : diagram.need_h(size.x) + fh * 0.4f;
        if (stage < 0 && (alone || y + wrapped_height(line, size.x) + need_below > bottom))
            line.clear();
        if (!line.empty() && !room_for(wrapped_height(line, size.x))) return;
        if (!line.empty())
            y +=
                put_wrapped(ImVec2(o.x, y),
                            stage < 0 ? f.theme.muted_text : to_u32(f.pal.highlight), line, size.x);
    }
    if (is_projection_stage(stage)) {
        y += fh * 0.4f;
        draw_projection_stage(f, pin, stage, ImVec2(o.x, y), ImVec2(size.x, bottom - y),
                              alone ? 4.0f : 2.0f, proj_record);
        return;
    }
    // Alone, the diagram's size first; else the lines first at the text size, the diagram
    // growing into what is left.
    // Alone, the diagram's room is the window less the lines above it and the window's frame as
    // they are at text 2 (at least), so that a larger text never draws it smaller.
    float diagram_room = bottom - y - fh * 0.4f, diagram_w = size.x;
    if (alone) {
        const float ref = std::max(1.0f, 2.0f / std::max(f.ui.settings.font_scale, 0.1f));
        auto at_ref = [&](const std::string& t) { return wrapped_height(t, size.x / ref) * ref; };
        const float above = at_ref(head) + fh * ref * 1.95f +
                            (stage >= 0 ? at_ref(stage_line(rv, pin, stage)) : 0.0f);
        // The window's title and padding too, as they are at text 2.
        const float win_h = ImGui::GetWindowHeight(), chrome = std::max(0.0f, win_h - size.y);
        diagram_room = std::min(diagram_room, win_h - chrome * ref - above);
        const float win_w = ImGui::GetWindowWidth();
        diagram_w = std::min(size.x, win_w - std::max(0.0f, win_w - size.x) * ref);
    }
    float room =
        bottom - y - fh * 0.4f -
        (alone ? diagram.fit(ImVec2(diagram_w, diagram_room), 4.0f) : diagram.need_h(size.x));
    auto fits = [&](float h) {
        if (h > room) return false;
        room -= h;
        return true;
    };
    // This row's numbers, as far as the stage has come (no stage shows a later one's), wrapped
    // between their pieces.
    const std::vector<std::string> parts = explain_number_parts(e, astage);
    const int parts_shown = static_cast<int>(parts.size());
    if (rv.record) {
        rv.record->numbers.clear();
        for (const auto& p : parts)
            rv.record->numbers += (rv.record->numbers.empty() ? "" : " ") + p;
    }
    {
        float nx = o.x, lines = parts_shown > 0 ? 1 : 0;
        for (int i = 0; i < parts_shown; ++i) {
            const float w = text_width(parts[i], fh);
            if (nx > o.x && nx + w > o.x + size.x) {
                nx = o.x + fh;
                ++lines;
            }
            nx += w + text_width(" ", fh);
        }
        if (parts_shown > 0 && fits(lines * fh * 1.25f)) {
            nx = o.x;
            for (int i = 0; i < parts_shown; ++i) {
                const std::string& part = parts[i];
                const float w = text_width(part, fh);
                if (nx > o.x && nx + w > o.x + size.x) {
                    nx = o.x + fh;
                    y += fh * 1.25f;
                }
                put_text(ImVec2(nx, y), ImGui::GetColorU32(ImGuiCol_Text),
                         clipped(part, o.x + size.x - nx));
                nx += w + text_width(" ", fh);
            }
            y += fh * 1.25f;
        }
    }
    const ExplainLines L = explain_lines(e);
    // The shapes: two per line where the width allows.
    auto pair_line = [&](const std::string& a, const std::string& b) {
        if (a.empty() && b.empty()) return;
        const float wa = text_width(a, fh);
        if (b.empty() || wa + fh * 2 + text_width(b, fh) > size.x) {
            const float h = wrapped_height(a, size.x) + (b.empty() ? 0 : wrapped_height(b, size.x));
            if (!fits(h)) return;
            y += put_wrapped(ImVec2(o.x, y), f.theme.muted_text, a, size.x);
            if (!b.empty()) y += put_wrapped(ImVec2(o.x, y), f.theme.muted_text, b, size.x);
            return;
        }
        if (!fits(fh * 1.2f)) return;
        put_text(ImVec2(o.x, y), f.theme.muted_text, a);
        put_text(ImVec2(o.x + wa + fh * 2, y), f.theme.muted_text, b);
        y += fh * 1.2f;
    };
    if (astage < 0) pair_line(L.scores, L.output);
    if (astage < 0 || astage == 2) pair_line(L.scale, astage < 0 ? L.gqa : std::string());
    // Why not Q, for this layer: what its query rows were for, and the step's K/V rows.
    const std::string wq =
        astage <= 0
            ? why_not_q_words(*rv.step, e.layer, model->config().n_layers, report_lang(f.ui.lang))
            : std::string();
    if (!wq.empty() && fits(wrapped_height(wq, size.x)))
        y += put_wrapped(
            ImVec2(o.x, y),
            e.mode == CacheMode::Uncached ? to_u32(f.pal.recomputed) : f.theme.muted_text, wq,
            size.x);
    y += fh * 0.4f;
    if (!alone) diagram.fit(ImVec2(size.x, bottom - y), 2.0f);
    diagram.draw_at(ImVec2(o.x, y), ImVec2(size.x, bottom - y));
}

}  // namespace

void open_inside_attention(UiState& ui, ExplainUi& x, int session, int layer, int head, int q_pos) {
    x.open = true;
    x.from_lesson = false;
    x.session = session;
    x.layer = layer;
    x.head = head;
    x.q_pos = q_pos;
    ui.settings.layer = layer;
    ui.settings.head = head;
}

void toggle_inside_attention(UiState& ui, ExplainUi& x) {
    if (x.open) {
        x.open = false;
        if (ui.maximised == "inside") ui.maximised.clear();
    } else {
        open_inside_attention(ui, x, 0, ui.settings.layer, ui.settings.head, -1);
    }
}

void explain_stage_key(UiState& ui, ExplainUi& x, bool back) {
    if (!x.open) open_inside_attention(ui, x, 0, ui.settings.layer, ui.settings.head, -1);
    x.stage_playing = false;
    step_explain_stage(x, back ? -1 : +1);
}

void play_explain_stages(UiState& ui, ExplainUi& x) {
    // From the first stage, one every kStagePlaySeconds.
    if (!x.open) open_inside_attention(ui, x, 0, ui.settings.layer, ui.settings.head, -1);
    x.stage_playing = !x.stage_playing;
    if (x.stage_playing) {
        x.stage = -1;
        step_explain_stage(x, +1);
    }
}

void toggle_op_strip(UiState& ui, ExplainUi& x) {
    x.op_strip = !x.op_strip;
    if (!x.op_strip && ui.maximised == "ops") ui.maximised.clear();
}

void follow_lesson_explain(UiState& ui, ExplainUi& x, const LessonRun& run) {
    const bool stale = run.target < 0 && run.explain_step != run.played();
    if (run.explain_serial != x.seen_lesson_explain) {
        x.seen_lesson_explain = run.explain_serial;
        if (!stale) {
            open_inside_attention(ui, x, 0, run.explain_layer, run.explain_head, run.explain_q_pos);
            x.from_lesson = true;
            x.stage = -1;
        }
    } else if (x.from_lesson && stale) {
        x.open = false;
        x.from_lesson = false;
        if (ui.maximised == "inside") ui.maximised.clear();
    }
}

void step_explain_stage(ExplainUi& x, int delta) {
    if (!x.open) return;
    // -1 (all) -> 0 -> ... -> 6 -> -1, and back.
    const int n = kExplainStages + 1;
    x.stage = ((x.stage + 1 + delta) % n + n) % n - 1;
    x.stage_shown_at = ImGui::GetTime();
}

void move_inside_attention_row(FrameContext& f, ExplainUi& x, int delta) {
    if (!x.open || f.snap.sessions.empty()) return;
    const SessionView& sv =
        f.snap.sessions[std::clamp(x.session, 0, int(f.snap.sessions.size()) - 1)];
    const int s = shown_step(sv, f.step);
    const auto cur = query_row_at(sv.trace.steps(), s, x.q_pos);
    const auto newest = query_row_at(sv.trace.steps(), s, -1);
    if (!cur || !newest) return;
    const int q = std::clamp(cur->index + delta, 0, newest->index);
    x.q_pos = q == newest->index ? -1 : q;
}

void draw_inside_attention(FrameContext& f, ExplainUi& x) {
    const float fh = f.font_px;
    const Model* model = f.model();
    if (f.layout) f.layout->explain.open = true;
    if (!model || f.snap.sessions.empty()) {
        ImGui::TextUnformatted(tr("No model open."));
        return;
    }
    const ModelConfig& c = model->config();
    x.session = std::clamp(x.session, 0, static_cast<int>(f.snap.sessions.size()) - 1);
    x.layer = std::clamp(x.layer, 0, c.n_layers - 1);
    x.head = std::clamp(x.head, 0, c.n_heads - 1);
    // Playing the stages: the next one every kStagePlaySeconds, stopping after the last.
    if (x.stage_playing && ImGui::GetTime() - x.stage_shown_at >= kStagePlaySeconds) {
        if (x.stage + 1 >= kExplainStages)
            x.stage_playing = false;
        else
            step_explain_stage(x, +1);
    }
    // Compare mode: both sessions side by side (the one clicked first), else the one chosen.
    std::vector<int> order;
    const int n = static_cast<int>(f.snap.sessions.size());
    order.push_back(x.session);
    for (int i = 0; i < n; ++i)
        if (i != x.session) order.push_back(i);
    std::vector<RowView> rows;
    for (int si : order) rows.push_back(row_view(f, x, si));
    if (f.layout) {
        // Each session's row, as drawn.
        f.layout->explain.drawn.assign(rows.size(), ExplainRowRecord{});
        for (std::size_t i = 0; i < rows.size(); ++i) {
            ExplainRowRecord& d = f.layout->explain.drawn[i];
            rows[i].record = &d;
            d.session = session_label(*rows[i].sv);
            if (rows[i].e) {
                d.step = rows[i].e->step;
                d.position = position_of_index(rows[i].e->q_pos);
                d.mask = mask_name(rows[i].e->mask);
            }
        }
        ExplainRecord& r = f.layout->explain;
        const RowView& rv = rows[0];
        r.session = session_label(*rv.sv);
        r.layer = x.layer;
        r.head = x.head;
        r.stage = x.stage;
        r.why = rv.e ? "" : rv.why;
        if (rv.e) {
            r.step = rv.e->step;
            r.row = rv.e->row;
            r.q_pos = rv.e->q_pos;
            r.position = position_of_index(rv.e->q_pos);
            r.n_keys = rv.e->n_keys;
            r.head_dim = rv.e->head_dim;
            r.phase = phase_name(rv.e->phase);
            r.mode = mode_name(rv.e->mode);
        }
        r.sessions = static_cast<int>(rows.size());
    }
    const ImVec2 o = ImGui::GetCursorScreenPos();
    ImVec2 avail = ImGui::GetContentRegionAvail();
    // Side by side when each gets the width its columns need, else one above the other (never
    // two diagrams too narrow for their columns, drawn over each other).
    const int k = static_cast<int>(rows.size());
    const bool side = k == 1 || avail.x + 1 >= inside_need_w(fh, k);
    const float gap = fh;
    // Every key's row keeps its numbers (a room reads them): where the panel is shorter than the
    // diagrams need at this text size (a tab of a laptop's stage at a large text, compare mode's
    // two rows), they take that height and the panel scrolls.
    const float row_w = side ? (avail.x - gap * (k - 1)) / k : avail.x;
    float need = 0;
    for (const RowView& rv : rows)
        need = std::max(need, row_need_h(f, rv, x, x.stage, row_w, k > 1));
    avail.y = std::max(avail.y, side ? need : need * k + gap * (k - 1));
    const bool alone = f.ui.maximised == "inside";
    for (int i = 0; i < k; ++i) {
        const ImVec2 at = side ? ImVec2(o.x + i * (avail.x + gap) / k, o.y)
                               : ImVec2(o.x, o.y + i * (avail.y + gap) / k);
        const ImVec2 box =
            side ? ImVec2(row_w, avail.y) : ImVec2(avail.x, (avail.y - gap * (k - 1)) / k);
        draw_row(f, rows[i], x, at, box, k > 1, alone,
                 i == 0 && f.layout ? &f.layout->explain.projection : nullptr);
    }

    ImGui::Dummy(avail);
}

}  // namespace kvs::gui
