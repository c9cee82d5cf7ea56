#include "gui/draw/text_record.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>

namespace kvs::gui {
namespace {

struct GlyphInfo {
    unsigned codepoint;
    float x0, y0, y1, advance;  // at the font's size
    float size;                 // the font's size
};

// A glyph is known by its place in the atlas: the UVs of its quad's corners.
std::uint64_t uv_key(const ImVec2& a, const ImVec2& b) {
    std::uint32_t v[4];
    std::memcpy(&v[0], &a.x, 4);
    std::memcpy(&v[1], &a.y, 4);
    std::memcpy(&v[2], &b.x, 4);
    std::memcpy(&v[3], &b.y, 4);
    std::uint64_t h = 1469598103934665603ull;
    for (std::uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return h;
}

void append_utf8(std::string& s, unsigned c) {
    if (c < 0x80) {
        s += char(c);
    } else if (c < 0x800) {
        s += char(0xC0 | (c >> 6));
        s += char(0x80 | (c & 0x3F));
    } else {
        s += char(0xE0 | (c >> 12));
        s += char(0x80 | ((c >> 6) & 0x3F));
        s += char(0x80 | (c & 0x3F));
    }
}

// The panel a window belongs to: its root's id (after "###"), else its name.
std::string panel_of(const ImGuiWindow* w) {
    const ImGuiWindow* root = w->RootWindow ? w->RootWindow : w;
    std::string n = root->Name;
    const auto hash = n.find("###");
    if (hash != std::string::npos) n = n.substr(hash + 3);
    return n;
}

struct Run {
    TextRecord rec;
    float pen_x = 0, pen_y = 0, scale = 1;  // where the next glyph would go
    bool open = false;
};

}  // namespace

void record_text(LayoutRecord& rec) {
    ImGuiContext& g = *GImGui;
    ImFontAtlas* atlas = ImGui::GetIO().Fonts;
    std::unordered_map<std::uint64_t, GlyphInfo> glyphs;
    for (const ImFont* font : atlas->Fonts)
        for (const ImFontGlyph& gl : font->Glyphs)
            if (gl.Visible)
                glyphs.emplace(
                    uv_key(ImVec2(gl.U0, gl.V0), ImVec2(gl.U1, gl.V1)),
                    GlyphInfo{gl.Codepoint, gl.X0, gl.Y0, gl.Y1, gl.AdvanceX, font->FontSize});

    for (ImGuiWindow* w : g.Windows) {
        if (!w->WasActive || w->Hidden || !w->DrawList) continue;
        const ImDrawList* dl = w->DrawList;
        const bool overlay =
            (w->Flags & (ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_Popup)) != 0 ||
            std::strstr(w->Name, "###keys");
        // Text cut at an edge the window scrolls past is expected (the rest is a scroll away);
        // cut at the right of a window that only scrolls down, it is not.
        const bool scrolls_x = w->ScrollMax.x > 0, scrolls_y = w->ScrollMax.y > 0;
        const std::string panel = panel_of(w);
        Run run;
        // The glyphs drawn last: bold without a bold font (Chinese in a heading) draws a piece
        // twice, under a pixel apart; the second copy is the same text, not a second label.
        struct Recent {
            unsigned cp;
            float x, y;
        };
        std::vector<Recent> recent;
        auto close = [&] {
            // ImGui draws no glyph that starts past the clip rectangle's right edge, so text cut
            // between two glyphs ends at that edge, the next glyph's left bearing (under a
            // pixel) away: a line ending within 0.6 px of it is cut. Wrapped lines stop short
            // of it (a Chinese paragraph wrapped to the edge ends a pixel or more before it).
            const Rect& r = run.rec.rect;
            const float edge = run.rec.clip.x + run.rec.clip.w;
            if (run.open && !run.rec.vertical && std::fabs(r.x + r.w - edge) <= 0.6f)
                run.rec.clipped_x = true;
            if (run.open && !run.rec.text.empty()) rec.texts.push_back(run.rec);
            run = Run();
        };
        for (const ImDrawCmd& cmd : dl->CmdBuffer) {
            close();
            if (cmd.UserCallback || cmd.TextureId != atlas->TexID) continue;
            const ImDrawIdx* idx = dl->IdxBuffer.Data + cmd.IdxOffset;
            const ImDrawVert* vtx = dl->VtxBuffer.Data + cmd.VtxOffset;
            const ImVec4 cr = cmd.ClipRect;
            for (unsigned i = 0; i + 6 <= cmd.ElemCount;) {
                const unsigned b = idx[i];
                // A quad as ImDrawList::PrimRectUV writes it: (b, b+1, b+2), (b, b+2, b+3).
                const bool quad = idx[i + 1] == b + 1 && idx[i + 2] == b + 2 && idx[i + 3] == b &&
                                  idx[i + 4] == b + 2 && idx[i + 5] == b + 3;
                if (!quad) {
                    i += 3;
                    continue;
                }
                const ImDrawVert* v = vtx + b;
                const auto found = glyphs.find(uv_key(v[0].uv, v[2].uv));
                if (found == glyphs.end()) {
                    close();
                    i += 6;
                    continue;
                }
                i += 6;
                const GlyphInfo& gi = found->second;
                // The second copy is line size / 28 px to the right (gui/draw/markdown_view.cpp;
                // the line's size may be up to 1.5x the glyph's): under 2 px for a heading at text
                // 2. The size drawn: the font's, scaled as the quad is.
                const float glyph_h = gi.y1 - gi.y0;
                const float drawn_size =
                    glyph_h > 0 ? gi.size * std::fabs(v[2].pos.y - v[0].pos.y) / glyph_h : 0;
                const float near = std::max(2.5f, drawn_size / 10 + 0.5f);
                const bool copy = std::any_of(recent.begin(), recent.end(), [&](const Recent& q) {
                    return q.cp == gi.codepoint && std::fabs(q.x - v[0].pos.x) <= near + 0.01f &&
                           std::fabs(q.y - v[0].pos.y) < 0.5f;
                });
                if (copy) continue;
                recent.push_back({gi.codepoint, v[0].pos.x, v[0].pos.y});
                if (recent.size() > 256) recent.erase(recent.begin());
                float x0 = v[0].pos.x, y0 = v[0].pos.y, x1 = x0, y1 = y0;
                for (int k = 1; k < 4; ++k) {
                    x0 = std::min(x0, v[k].pos.x);
                    y0 = std::min(y0, v[k].pos.y);
                    x1 = std::max(x1, v[k].pos.x);
                    y1 = std::max(y1, v[k].pos.y);
                }
                // Upright text runs left to right; the axis labels drawn upwards run bottom to
                // top (their first corner is the glyph's bottom left).
                const bool vertical = v[1].pos.y < v[0].pos.y - 0.01f;
                const float gh = gi.y1 - gi.y0;
                const float scale =
                    gh > 0 ? (vertical ? (x1 - x0) : (y1 - y0)) / gh : (run.open ? run.scale : 1);
                const float fh = ImGui::GetFontSize();
                float pen_x, pen_y;  // along and across the line
                if (vertical) {
                    pen_x = -(v[0].pos.y) - gi.x0 * scale;
                    pen_y = v[0].pos.x - gi.y0 * scale;
                } else {
                    // From the bottom-left corner: a slanted (italic) quad leans right above the
                    // baseline, its bottom barely (gui/draw/markdown_view.cpp).
                    pen_x = v[3].pos.x - gi.x0 * scale;
                    pen_y = v[0].pos.y - gi.y0 * scale;
                }
                const bool joins = run.open && run.rec.vertical == vertical &&
                                   std::fabs(pen_y - run.pen_y) < 1.0f &&
                                   pen_x > run.pen_x - 1.0f && pen_x < run.pen_x + fh * 1.2f;
                if (!joins) {
                    close();
                    run.open = true;
                    run.rec.panel = panel;
                    run.rec.rect = {x0, y0, 0, 0};
                    run.rec.clip = {cr.x, cr.y, cr.z - cr.x, cr.w - cr.y};
                    run.rec.scrolls_x = scrolls_x;
                    run.rec.scrolls_y = scrolls_y;
                    run.rec.overlay = overlay;
                    run.rec.vertical = vertical;
                } else if (pen_x > run.pen_x + fh * 0.15f) {
                    run.rec.text += ' ';
                }
                append_utf8(run.rec.text, gi.codepoint);
                Rect& r = run.rec.rect;
                const float rx1 = std::max(r.x + r.w, x1), ry1 = std::max(r.y + r.h, y1);
                r.x = std::min(r.x, x0);
                r.y = std::min(r.y, y0);
                r.w = rx1 - r.x;
                r.h = ry1 - r.y;
                // A glyph's bearing may reach a pixel past its pen position.
                run.rec.clipped_x = run.rec.clipped_x || x0 < cr.x - 1.0f || x1 > cr.z + 1.0f;
                run.rec.clipped_y = run.rec.clipped_y || y0 < cr.y - 1.0f || y1 > cr.w + 1.0f;
                run.pen_x = pen_x + gi.advance * scale;
                run.pen_y = pen_y;
                run.scale = scale;
            }
        }
        close();
    }
}

}  // namespace kvs::gui
