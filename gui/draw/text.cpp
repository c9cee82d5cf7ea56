// Text as the panels place it: at a point, wrapped, cut to a width, and rows of controls that wrap.
#include "gui/draw/text.h"

#include <algorithm>
#include <cfloat>
#include <vector>

namespace kvs::gui {

void put_text(ImVec2 p, ImU32 col, const std::string& text, float size) {
    const float px = size > 0 ? size : ImGui::GetFontSize();
    ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), px, p, col, text.c_str());
}

namespace {

// `text` in lines at word boundaries, each at most `width` wide (at least four text heights).
std::vector<std::string> split_lines(const std::string& text, float width) {
    ImFont* font = ImGui::GetFont();
    const float px = ImGui::GetFontSize();
    const char* s = text.c_str();
    const char* end = s + text.size();
    std::vector<std::string> lines;
    while (s < end) {
        const float w = std::max(width, px * 4);
        // The font's own wrap measures at its atlas size: scaled to the text height drawn (a
        // panel shown alone draws its text larger than the atlas's).
        const char* cut = font->CalcWordWrapPositionA(px / font->FontSize, s, end, w);
        if (cut == s) cut = end;  // nothing fits: the rest on one line rather than loop
        // A word wider than the line (a Chinese sentence has no spaces to break at): cut it
        // between characters instead, at least one per line.
        while (cut > s && font->CalcTextSizeA(px, FLT_MAX, 0, s, cut).x > w) {
            const char* prev = cut - 1;
            while (prev > s && (static_cast<unsigned char>(*prev) & 0xC0) == 0x80) --prev;
            if (prev == s) break;
            cut = prev;
        }
        lines.emplace_back(s, cut);
        s = cut;
        while (s < end && *s == ' ') ++s;
    }
    return lines;
}

}  // namespace

float put_wrapped(ImVec2 p, ImU32 col, const std::string& text, float width) {
    const float line_h = ImGui::GetTextLineHeightWithSpacing();
    float y = p.y;
    for (const std::string& line : split_lines(text, width)) {
        put_text(ImVec2(p.x, y), col, line);
        y += line_h;
    }
    return y - p.y;
}

float wrapped_height(const std::string& text, float width) {
    return split_lines(text, width).size() * ImGui::GetTextLineHeightWithSpacing();
}

std::vector<std::string> wrapped_lines(const std::string& text, float width) {
    return split_lines(text, width);
}

void same_line_or_wrap(float w, float spacing) {
    const float sp = spacing < 0 ? ImGui::GetStyle().ItemSpacing.x : spacing;
    ImGui::SameLine(0, sp);
    if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
}

float text_width(const std::string& s, float px) {
    return ImGui::GetFont()->CalcTextSizeA(px, FLT_MAX, 0, s.c_str()).x;
}

std::string clipped(const std::string& s, float max_w, float px) {
    if (px <= 0) px = ImGui::GetFontSize();
    if (text_width(s, px) <= max_w) return s;
    std::string t = s;
    while (!t.empty() && text_width(t + "..", px) > max_w) {
        // One whole character off the end: its continuation bytes, then its first byte.
        while (!t.empty() && (static_cast<unsigned char>(t.back()) & 0xC0) == 0x80) t.pop_back();
        if (!t.empty()) t.pop_back();
    }
    return t + "..";
}

}  // namespace kvs::gui
