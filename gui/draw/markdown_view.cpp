#include "gui/draw/markdown_view.h"
#include "gui/draw/text.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string>

namespace kvs::gui {
namespace {

// The code point at s[i] and its length in bytes (a stray byte counts as one).
char32_t next_code_point(const std::string& s, std::size_t i, int& len) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (i + len > s.size()) len = 1;
    if (len == 1) return c;
    char32_t cp = c & (0x7F >> len);
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    return cp;
}

bool is_cjk(char32_t cp) {
    return (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0xFF00 && cp <= 0xFFEF);
}

// Marks that must not start a line (they stay with what they close) ...
bool is_closing(char32_t cp) {
    switch (cp) {
        case ',':
        case '.':
        case ';':
        case ':':
        case '!':
        case '?':
        case ')':
        case ']':
        case 0x3001:
        case 0x3002:
        case 0xFF0C:
        case 0xFF1B:
        case 0xFF1A:
        case 0xFF01:
        case 0xFF1F:
        case 0xFF09:
        case 0x300D:
        case 0x300F:
        case 0x300B:
        case 0x201D:
        case 0x2019:
            return true;
        default:
            return false;
    }
}

// ... and marks that must not end one.
bool is_opening(char32_t cp) {
    switch (cp) {
        case '(':
        case '[':
        case 0xFF08:
        case 0x300C:
        case 0x300E:
        case 0x300A:
        case 0x201C:
        case 0x2018:
            return true;
        default:
            return false;
    }
}

// Pieces of `s` a line may break between: a word with its trailing spaces, or one Chinese
// character with the punctuation that closes it.
struct Unit {
    std::string text;
    bool break_before = true;
};

struct BreakState {
    bool prev_space = true, prev_cjk = false, prev_opening = false;
};

std::vector<Unit> break_units(const std::string& s, BreakState& st) {
    std::vector<Unit> units;
    Unit cur;
    bool first = true;
    for (std::size_t i = 0; i < s.size();) {
        int len = 1;
        const char32_t cp = next_code_point(s, i, len);
        const bool space = cp == ' ', cjk = is_cjk(cp);
        const bool brk =
            !space && !is_closing(cp) && !st.prev_opening && (st.prev_space || cjk || st.prev_cjk);
        if (brk && !cur.text.empty()) {
            units.push_back(std::move(cur));
            cur = Unit();
        }
        if (cur.text.empty() && first) {
            cur.break_before = brk;
            first = false;
        }
        cur.text.append(s, i, len);
        st.prev_space = space;
        st.prev_cjk = cjk && !is_closing(cp);
        st.prev_opening = is_opening(cp);
        i += len;
    }
    if (!cur.text.empty()) units.push_back(std::move(cur));
    return units;
}

bool has_cjk(const std::string& s) {
    for (std::size_t i = 0; i < s.size();) {
        int len = 1;
        if (is_cjk(next_code_point(s, i, len))) return true;
        i += len;
    }
    return false;
}

bool ascii_only(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; });
}

float text_width(ImFont* font, float size, const std::string& s) {
    return font->CalcTextSizeA(size, FLT_MAX, 0, s.data(), s.data() + s.size()).x;
}

// Text with its glyph quads slanted (italic) about the baseline.
void add_slanted_text(ImDrawList* dl, ImFont* font, float size, ImVec2 pos, ImU32 col,
                      const std::string& s) {
    const int start = dl->VtxBuffer.Size;
    dl->AddText(font, size, pos, col, s.data(), s.data() + s.size());
    const float base = pos.y + size * 0.8f;
    for (int i = start; i < dl->VtxBuffer.Size; ++i) {
        ImVec2& p = dl->VtxBuffer[i].pos;
        p.x += (base - p.y) * 0.2f;
    }
}

}  // namespace

void draw_md_line(const MdLine& line, const MdStyle& style, float width, ImU32 colour, float scale,
                  bool bold) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize() * scale;
    const float line_h = size * 1.3f;
    const ImVec2 o = ImGui::GetCursorScreenPos();
    width = std::max(width, size * 4);

    // Every piece with its font and widths; a piece that may not start a line joins the group of
    // the one before it (a word and the bold comma after it), and groups wrap as one.
    struct Piece {
        const MdSpan* span;
        std::string bare;  // without trailing spaces
        ImFont* font;
        float size, w, w_bare;
        bool heavy, faux_bold, group_start;
    };
    std::vector<Piece> pieces;
    BreakState st;
    for (const MdSpan& sp : line) {
        const bool mono = sp.code && style.mono && ascii_only(sp.text);
        const bool heavy = (sp.bold || bold) && !sp.code;
        const float fs = mono ? size * 0.95f : size;
        for (Unit& u : break_units(sp.text, st)) {
            // The bold font has no Chinese: such pieces are drawn twice instead.
            const bool bold_font = heavy && style.bold && !has_cjk(u.text);
            ImFont* f = mono ? style.mono : bold_font ? style.bold : font;
            Piece p{&sp, u.text, f, fs, 0, 0, heavy, heavy && !bold_font, u.break_before};
            while (!p.bare.empty() && p.bare.back() == ' ') p.bare.pop_back();
            p.w = text_width(f, fs, u.text);
            p.w_bare = text_width(f, fs, p.bare);
            pieces.push_back(std::move(p));
        }
    }

    // An italic piece leans right: its top reaches past its width by the slant of
    // add_slanted_text (0.2 x the 0.8 x size above the baseline), which a line's end must hold.
    const auto lean = [](const Piece& p) { return p.span->italic ? p.size * 0.16f : 0.0f; };
    float x = 0, y = 0, right = 0;
    for (std::size_t g = 0; g < pieces.size();) {
        std::size_t e = g + 1;
        while (e < pieces.size() && !pieces[e].group_start) ++e;
        float group_w = 0;
        for (std::size_t k = g; k + 1 < e; ++k) group_w += pieces[k].w;
        group_w += pieces[e - 1].w_bare + lean(pieces[e - 1]);
        // A line stops a pixel short of the edge: one ending on it cannot be told from one cut
        // there (gui/draw/text_record.cpp).
        if (x > 0 && x + group_w > width - 1) {
            x = 0;
            y += line_h;
        }
        for (std::size_t k = g; k < e; ++k) {
            const Piece& pc = pieces[k];
            if (x == 0 && pc.bare.empty()) continue;  // spaces at a line start vanish
            const MdSpan& sp = *pc.span;
            const ImVec2 p(o.x + x, o.y + y + (line_h - size) * 0.5f + (size - pc.size) * 0.5f);
            const ImU32 col = sp.code ? style.text : colour;
            if (sp.code)
                dl->AddRectFilled(ImVec2(p.x - 1, o.y + y + 1),
                                  ImVec2(p.x + pc.w_bare + 2, o.y + y + line_h - 1), style.code_bg,
                                  3);
            auto draw = [&](ImVec2 at) {
                if (sp.italic)
                    add_slanted_text(dl, pc.font, pc.size, at, col, pc.bare);
                else
                    dl->AddText(pc.font, pc.size, at, col, pc.bare.data(),
                                pc.bare.data() + pc.bare.size());
            };
            draw(p);
            // A whole pixel apart, a dense Chinese character (第, 给) at 16-18 px fills in and
            // cannot be read; 1/28 of the size (0.6 px at text 1) thickens its strokes only.
            if (pc.faux_bold) draw(ImVec2(p.x + size / 28, p.y));
            right = std::max(right, x + pc.w_bare + lean(pc));
            x += pc.w;
        }
        g = e;
    }
    ImGui::Dummy(ImVec2(std::min(right, width), y + line_h));
}

void draw_markdown(const std::vector<MdBlock>& blocks, const MdStyle& style) {
    const float fh = ImGui::GetFontSize();
    int table_id = 0;
    for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
        const MdBlock& b = blocks[bi];
        const float avail = ImGui::GetContentRegionAvail().x;
        switch (b.kind) {
            case MdKind::Heading:
                ImGui::Dummy(ImVec2(0, fh * 0.2f));
                draw_md_line(b.spans, style, avail, style.heading, b.level <= 2 ? 1.15f : 1.0f,
                             true);
                break;
            case MdKind::Paragraph:
                draw_md_line(b.spans, style, avail, style.text);
                break;
            case MdKind::Bullet:
            case MdKind::Numbered: {
                const float indent = fh * (0.4f + 1.2f * b.level);
                char marker[16];
                if (b.kind == MdKind::Bullet)
                    std::snprintf(marker, sizeof marker, "%s",
                                  ImGui::GetFont()->FindGlyphNoFallback(0x2022)
                                      ? "\xE2\x80\xA2"  // U+2022 bullet
                                      : "-");
                else
                    std::snprintf(marker, sizeof marker, "%d.", b.number);
                const ImVec2 p = ImGui::GetCursorScreenPos();
                ImGui::GetWindowDrawList()->AddText(ImVec2(p.x + indent, p.y + fh * 0.15f),
                                                    style.muted, marker);
                const float text_x = indent + fh * (b.kind == MdKind::Bullet ? 0.9f : 1.5f);
                ImGui::SetCursorScreenPos(ImVec2(p.x + text_x, p.y));
                draw_md_line(b.spans, style, avail - text_x, style.text);
                break;
            }
            case MdKind::Table: {
                if (b.rows.empty()) break;
                int cols = 0;
                for (const auto& r : b.rows) cols = std::max(cols, static_cast<int>(r.size()));
                if (cols == 0 || cols > 64) break;
                ImGui::PushID(table_id++);
                if (ImGui::BeginTable("mdtable", cols,
                                      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                          ImGuiTableFlags_SizingStretchProp)) {
                    // Each column's share of the width in proportion to its widest cell unwrapped
                    // (the header's bold a little wider), so that a column whose words fit is
                    // never narrower than its longest word while another has room to spare.
                    for (int c = 0; c < cols; ++c) {
                        float natural = 1;
                        for (std::size_t r = 0; r < b.rows.size(); ++r) {
                            if (c >= static_cast<int>(b.rows[r].size())) continue;
                            std::string t;
                            for (const MdSpan& sp : b.rows[r][c]) t += sp.text;
                            natural = std::max(
                                natural, ImGui::CalcTextSize(t.c_str()).x * (r == 0 ? 1.1f : 1.0f));
                        }
                        ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch, natural);
                    }
                    for (std::size_t r = 0; r < b.rows.size(); ++r) {
                        ImGui::TableNextRow(r == 0 ? ImGuiTableRowFlags_Headers : 0);
                        for (int c = 0; c < cols; ++c) {
                            ImGui::TableNextColumn();
                            if (c >= static_cast<int>(b.rows[r].size())) continue;
                            draw_md_line(b.rows[r][c], style, ImGui::GetContentRegionAvail().x,
                                         r == 0 ? style.heading : style.text, 1.0f, r == 0);
                        }
                    }
                    ImGui::EndTable();
                }
                ImGui::PopID();
                break;
            }
            case MdKind::Code: {
                if (style.mono) ImGui::PushFont(style.mono);
                const ImVec2 p = ImGui::GetCursorScreenPos();
                const ImVec2 sz = ImGui::CalcTextSize(b.code.c_str());
                ImGui::GetWindowDrawList()->AddRectFilled(
                    p, ImVec2(p.x + std::max(sz.x, avail), p.y + sz.y + fh * 0.4f), style.code_bg,
                    3);
                ImGui::SetCursorScreenPos(ImVec2(p.x + fh * 0.3f, p.y + fh * 0.2f));
                ImGui::TextUnformatted(b.code.c_str());
                if (style.mono) ImGui::PopFont();
                break;
            }
            case MdKind::Rule:
                ImGui::Separator();
                break;
        }
        if (bi + 1 < blocks.size()) ImGui::Dummy(ImVec2(0, fh * 0.35f));
    }
}

}  // namespace kvs::gui
