// Inside attention's projection stages: one stage at a time, its vectors as strips of coloured
// cells (blue negative, red positive) with their numbers, x·W as the head's weight rows beside
// the values they make (the stage line above says the shapes), RoPE as the vectors before and after
// with their lengths and angles, and the cache as one box per key read. Laid out top to bottom in a
// box; every text recorded.
#include "gui/panels/inside_projection.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/draw/text.h"
#include "gui/state/strings.h"
#include "gui/views/colormap.h"
#include "gui/views/inside_attention_text.h"

namespace kvs::gui {
namespace {

float largest(const std::vector<float>& v) {
    float m = 0;
    for (float x : v)
        if (std::isfinite(x)) m = std::max(m, std::fabs(x));
    return m > 0 ? m : 1.0f;
}

std::string printf_string(const char* fmt, auto... args) {
    char b[400];
    std::snprintf(b, sizeof b, fmt, args...);
    return b;
}

Rgba source_rgba(const HeatmapPalette& pal, KvSource s) {
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

// One stage's drawing: a pen moving down the box, each piece measured (draw false) or drawn.
struct Stage {
    FrameContext& f;
    const ProjectionInput& in;
    int p;
    ImVec2 o;
    float width;
    float fh;
    bool compact = false;  // the weight rows thinner, their values smaller
    bool draw = false;
    float y = 0;
    ImDrawList* dl = ImGui::GetWindowDrawList();

    const ProjectionExplain& pe() const { return *in.pe; }
    float pad() const { return fh * 0.35f; }
    float label_w() const {
        float w = 0;
        for (const char* s : {"x_norm", tr("q before"), tr("q after"), tr("K row"), tr("angle")})
            w = std::max(w, text_width(s, fh));
        return w + pad() * 2;
    }

    // Wrapped at spaces to the width, at this stage's text size.
    void line(const std::string& s, ImU32 col) {
        std::string cur;
        std::size_t i = 0;
        auto flush = [&] {
            if (draw) put_text(ImVec2(o.x, o.y + y), col, clipped(cur, width, fh), fh);
            y += fh * 1.25f;
            cur.clear();
        };
        while (i <= s.size()) {
            const std::size_t j = std::min(s.find(' ', i), s.size());
            const std::string word = s.substr(i, j - i);
            const std::string next = cur.empty() ? word : cur + " " + word;
            if (!cur.empty() && text_width(next, fh) > width)
                flush(), cur = word;
            else
                cur = next;
            i = j + 1;
        }
        if (!cur.empty()) flush();
    }

    // A labelled strip of `v`'s values across the width; each cell its number where every number
    // fits its cell, else the values on a line below.
    void strip(const std::string& label, const std::vector<float>& v, float scale, const char* name,
               bool numbers_line = true) {
        const int n = static_cast<int>(v.size());
        if (n == 0) return;
        const float lw = label_w(), x0 = o.x + lw, cw = (width - lw) / n;
        float widest = 0;
        for (float x : v) widest = std::max(widest, text_width(fmt_number(x), fh));
        const bool numbers = cw >= widest + pad();
        const float h = numbers ? fh * 1.3f : fh * 0.9f;
        if (draw) {
            put_text(ImVec2(o.x, o.y + y + (h - fh) * 0.5f), ImGui::GetColorU32(ImGuiCol_Text),
                     clipped(label, lw - pad(), fh), fh);
            for (int i = 0; i < n; ++i) {
                const ImVec2 a(x0 + i * cw, o.y + y), b(x0 + (i + 1) * cw, o.y + y + h);
                const Rgba c = signed_colour(v[i], scale);
                dl->AddRectFilled(a, ImVec2(std::max(b.x - 1, a.x + 1), b.y - 1), to_u32(c));
                if (numbers)
                    put_text(ImVec2(a.x + pad() * 0.5f, a.y + (h - fh) * 0.5f), to_u32(ink_on(c)),
                             fmt_number(v[i]), fh);
            }
        }
        y += h + fh * 0.25f;
        if (!numbers && numbers_line)
            line(projection_numbers(name, v, n <= 16 ? n : 8), f.theme.muted_text);
    }

    // x_norm · W rows → the head's values: the weight rows as a heat block, each row's value
    // beside it.
    void matmul(const char* w_name, const char* out, const std::vector<float>& result) {
        const WeightStrip* s = in.strip;
        const float lw = label_w();
        float res_w = 0;
        for (float x : result) res_w = std::max(res_w, text_width(fmt_number(x), fh));
        res_w += pad() * 2;
        const float block_x = o.x + lw, block_w = std::max(fh, width - lw - res_w - fh * 0.5f);
        const float res_x = block_x + block_w + fh * 0.5f;
        // x_norm above the block, cell for cell with its columns.
        const int n = static_cast<int>(pe().x_norm.size());
        if (draw) {
            put_text(ImVec2(o.x, o.y + y), ImGui::GetColorU32(ImGuiCol_Text), "x_norm", fh);
            put_text(ImVec2(res_x, o.y + y), ImGui::GetColorU32(ImGuiCol_Text), out, fh);
            const float xs = largest(pe().x_norm);
            for (int i = 0; i < n; ++i)
                dl->AddRectFilled(ImVec2(block_x + i * block_w / n, o.y + y),
                                  ImVec2(block_x + (i + 1) * block_w / n, o.y + y + fh),
                                  to_u32(signed_colour(pe().x_norm[i], xs)));
        }
        y += fh * 1.3f;
        const int rows = static_cast<int>(result.size());
        // Short of room, rows of 0.8 text heights, their values at 0.68 of the text size.
        const float rh = compact ? fh * 0.8f : fh * 1.15f, num_px = compact ? fh * 0.68f : fh;
        if (draw) {
            put_text(ImVec2(o.x, o.y + y), ImGui::GetColorU32(ImGuiCol_Text),
                     clipped(s ? std::string(w_name) + "ᵀ" : std::string(), lw - pad(), fh), fh);
            const float rs = largest(result);
            for (int r = 0; r < rows; ++r) {
                const float ry = o.y + y + r * rh;
                if (s && r < s->rows)
                    for (int c = 0; c < s->cols; ++c) {
                        const float v = s->cells[std::size_t(r) * s->cols + c];
                        dl->AddRectFilled(ImVec2(block_x + c * block_w / s->cols, ry),
                                          ImVec2(block_x + (c + 1) * block_w / s->cols,
                                                 ry + rh - (compact ? 0 : 1)),
                                          to_u32(signed_colour(v, s->abs_max)));
                    }
                const Rgba c = signed_colour(result[r], rs);
                dl->AddRectFilled(ImVec2(res_x, ry), ImVec2(res_x + res_w, ry + rh - 1), to_u32(c));
                put_text(ImVec2(res_x + pad(), ry + (rh - num_px) * 0.5f), to_u32(ink_on(c)),
                         fmt_number(result[r]), num_px);
            }
        }
        y += rows * rh + fh * 0.3f;
        if (!s) line(in.strip_why, f.theme.muted_text);  // a replay, the toy: no weights
        if (s) {
            line(s->block > 1
                     ? printf_string(tr("%s rows %d–%d: this head's %d rows of %d, each "
                                        "cell the mean of %d weights"),
                                     w_name, s->first_row, s->first_row + s->rows - 1, s->rows,
                                     s->row_len, s->block)
                     : printf_string(tr("%s rows %d–%d: this head's %d rows, each cell "
                                        "one weight"),
                                     w_name, s->first_row, s->first_row + s->rows - 1, s->rows),
                 f.theme.muted_text);
        }
        if (pe().bias) line(tr("then + the bias"), f.theme.muted_text);
    }

    void rope() {
        const ProjectionExplain& e = pe();
        if (!e.rope) {
            line(tr("no RoPE in this model: its learned positions were added to x before the "
                    "first layer"),
                 f.theme.muted_text);
            return;
        }
        const float qs = std::max(largest(e.q), largest(e.q_rope));
        // Short of room, the values before RoPE are left to the x·W stages that showed them.
        strip(tr("q before"), e.q, qs, "q", !compact);
        strip(tr("q after"), e.q_rope, qs, "q'");
        line(printf_string(tr("|q| = %s before, %s after: a rotation keeps the length"),
                           fmt_number(float(e.q_len)).c_str(),
                           fmt_number(float(e.q_rope_len)).c_str()),
             ImGui::GetColorU32(ImGuiCol_Text));
        const float ks = std::max(largest(e.k), largest(e.k_rope));
        strip(tr("k before"), e.k, ks, "k", !compact);
        strip(tr("k after"), e.k_rope, ks, "k'");
        line(printf_string(tr("|k| = %s before, %s after"), fmt_number(float(e.k_len)).c_str(),
                           fmt_number(float(e.k_rope_len)).c_str()),
             ImGui::GetColorU32(ImGuiCol_Text));
        strip(tr("angle"), e.q_angle, 3.1416f, tr("angle"));
        line(printf_string(tr("each pair (2i, 2i+1) turned by position %d × ω_i (radians, "
                              "measured); the first pairs turn fastest"),
                           e.q_pos + 1),
             f.theme.muted_text);
    }

    void cache() {
        const ProjectionExplain& e = pe();
        const float s = std::max(largest(e.k_rope), largest(e.v));
        // Short of room, their values are left to the stages that computed them.
        strip(tr("K row"), e.k_rope, s, "k", !compact);
        strip(tr("V row"), e.v, s, "v", !compact);
        const char* how = e.own == KvSource::Recomputed
                              ? tr("recomputed: the step ran without the cache")
                              : tr("new");
        line(printf_string(tr("written as row %d of layer %d's cache (%s)"), e.cache_row + 1,
                           e.layer, how),
             to_u32(f.pal.highlight));
        // One box per key the query reads, in the colour of where its row came from.
        const int T = static_cast<int>(in.sources.size());
        if (T > 0) {
            const float bw = std::min(fh * 3.5f, width / T), bh = fh * 1.5f;
            const bool labels = bw >= text_width(std::to_string(T), fh) + pad();
            for (int j = 0; j < T && draw; ++j) {
                const ImVec2 a(o.x + j * bw, o.y + y), b(o.x + (j + 1) * bw - 2, o.y + y + bh);
                const Rgba c = source_rgba(f.pal, in.sources[j]);
                dl->AddRectFilled(a, b, to_u32(c));
                if (j == e.cache_row)
                    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1),
                                ImGui::GetColorU32(ImGuiCol_Text), 0, 0,
                                std::max(2.0f, fh * 0.15f));
                if (labels)
                    put_text(ImVec2(a.x + pad() * 0.5f, a.y + (bh - fh) * 0.5f), to_u32(ink_on(c)),
                             std::to_string(j + 1), fh);
            }
            y += bh + fh * 0.3f;
        }
        line(printf_string(tr("the query reads %d K/V rows: its own, just written, and of the "
                              "earlier ones %d from the cache, %d new, %d recomputed"),
                           e.keys_read, e.read_cached, e.read_new, e.read_recomputed),
             ImGui::GetColorU32(ImGuiCol_Text));
        legend();
    }

    // A swatch and its words for each source among the keys read.
    void legend() {
        for (KvSource src : {KvSource::Cached, KvSource::New, KvSource::Recomputed}) {
            if (std::find(in.sources.begin(), in.sources.end(), src) == in.sources.end()) continue;
            const float sw = fh * 0.8f;
            if (draw)
                dl->AddRectFilled(ImVec2(o.x, o.y + y + fh * 0.15f),
                                  ImVec2(o.x + sw, o.y + y + fh * 0.95f),
                                  to_u32(source_rgba(f.pal, src)));
            const char* words = src == KvSource::Cached ? tr("cached: read from the KV cache")
                                : src == KvSource::New
                                    ? tr("new: written to the cache by this step")
                                    : tr("recomputed: no cache, computed again from the tokens");
            // The words wrapped beside the swatch.
            const float x0 = sw + fh * 0.3f;
            o.x += x0;
            width -= x0;
            line(words, f.theme.muted_text);
            o.x -= x0;
            width += x0;
        }
    }

    float body() {
        y = 0;
        const ProjectionExplain& e = pe();
        switch (p) {
            case 0:
                strip("x", e.x, largest(e.x), "x");
                line(printf_string(tr("the residual stream entering layer %d: mean %s, rms %s"),
                                   e.layer, fmt_number(float(e.x_mean)).c_str(),
                                   fmt_number(float(e.x_rms)).c_str()),
                     ImGui::GetColorU32(ImGuiCol_Text));
                break;
            case 1:
                strip("x", e.x, largest(e.x), "x");
                line(e.layer_norm ? printf_string(tr("LayerNorm: − mean %s, ÷ standard deviation, "
                                                     "× the norm's weights, + its bias"),
                                                  fmt_number(float(e.x_mean)).c_str())
                                  : printf_string(tr("RMSNorm: ÷ rms %s, × the norm's weights"),
                                                  fmt_number(float(e.x_rms)).c_str()),
                     to_u32(f.pal.highlight));
                strip("x_norm", e.x_norm, largest(e.x_norm), "x_norm");
                break;
            case 2:
                matmul("W_q", "q", e.q);
                break;
            case 3:
                matmul("W_k", "k", e.k);
                break;
            case 4:
                matmul("W_v", "v", e.v);
                break;
            case 5:
                rope();
                break;
            default:
                cache();
                break;
        }
        return y;
    }
};

void record_stage(ProjectionRecord& r, const ProjectionInput& in, int p, float px) {
    r = ProjectionRecord{};
    r.stage = p;
    r.number_px = px;
    r.why = in.pe ? "" : in.why;
    if (!in.pe) return;
    const ProjectionExplain& e = *in.pe;
    if (p <= 1) {
        r.x = e.x;
        r.x_mean = e.x_mean;
        r.x_rms = e.x_rms;
    }
    if (p == 1) r.x_norm = e.x_norm;
    if (p == 2) r.q = e.q;
    if (p == 3) r.k = e.k;
    if (p == 4 || p == 6) r.v = e.v;
    if (p >= 2 && p <= 4) {
        r.weights_why = in.strip ? "" : in.strip_why;
        if (in.strip) {
            r.strip_rows = in.strip->rows;
            r.strip_cols = in.strip->cols;
            r.strip_block = in.strip->block;
            r.strip_first_row = in.strip->first_row;
        }
    }
    if (p == 5 && e.rope) {
        r.q = e.q;
        r.k = e.k;
        r.q_rope = e.q_rope;
        r.k_rope = e.k_rope;
        r.q_angle = e.q_angle;
        r.q_len = e.q_len;
        r.q_rope_len = e.q_rope_len;
        r.k_len = e.k_len;
        r.k_rope_len = e.k_rope_len;
    }
    if (p == 6) {
        r.k_rope = e.k_rope;
        r.cache_row = e.cache_row;
        r.keys_read = e.keys_read;
        r.read_cached = e.read_cached;
        r.read_new = e.read_new;
        r.read_recomputed = e.read_recomputed;
    }
}

}  // namespace

std::optional<MatrixKind> projection_stage_matrix(int p) {
    if (p == 2) return MatrixKind::wq;
    if (p == 3) return MatrixKind::wk;
    if (p == 4) return MatrixKind::wv;
    return std::nullopt;
}

const WeightStrip* cached_weight_strip(WeightStripCache& c, const Model& m, MatrixKind kind,
                                       int layer, int head, int cols, std::string* why) {
    if (c.model != &m || c.kind != static_cast<int>(kind) || c.layer != layer || c.head != head ||
        c.cols != cols) {
        c.model = &m;
        c.kind = static_cast<int>(kind);
        c.layer = layer;
        c.head = head;
        c.cols = cols;
        c.why.clear();
        c.strip = weight_strip(m, kind, layer, head, cols, &c.why);
    }
    if (why) *why = c.why;
    return c.strip ? &*c.strip : nullptr;
}

float projection_stage_need(FrameContext& f, const ProjectionInput& in, int p, float width) {
    if (!in.pe) return wrapped_height(in.why, width);
    Stage s{f, in, p, ImVec2(0, 0), width, f.font_px};
    s.compact = true;
    return s.body();
}

float draw_projection_stage(FrameContext& f, const ProjectionInput& in, int p, ImVec2 o,
                            ImVec2 size, float max_zoom, ProjectionRecord* record) {
    if (!in.pe) {
        if (record) record_stage(*record, in, p, 0);
        return put_wrapped(o, f.theme.muted_text, in.why, size.x);
    }
    Stage s{f, in, p, o, size.x, f.font_px};
    // The largest text size the stage fits at (down to the text size), its weight rows at full
    // height first, then thin.
    for (float z = std::max(max_zoom, 1.0f);; z = std::max(1.0f, z - 0.125f)) {
        s.fh = f.font_px * z;
        s.compact = false;
        if (s.body() <= size.y) break;
        if (z <= 1.0f) {
            s.compact = true;
            break;
        }
    }
    s.draw = true;
    if (record) record_stage(*record, in, p, s.fh);
    return s.body();
}

}  // namespace kvs::gui
