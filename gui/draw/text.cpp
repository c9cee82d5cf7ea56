// Text as the panels place it: at a point, wrapped, cut to a width, and rows of controls that wrap.
#include "gui/draw/text.h"

#include <algorithm>
#include <cfloat>

namespace kvs::gui {

void put_text(ImVec2 p, ImU32 col, const std::string& text, float size) {
    const float px = size > 0 ? size : ImGui::GetFontSize();
    ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), px, p, col, text.c_str());
}

namespace {

// Lays `text` out wrapped at word boundaries to `width`, drawing each line when `draw`.
float wrap_lines(ImVec2 p, ImU32 col, const std::string& text, float width, bool draw) {
    ImFont* font = ImGui::GetFont();
    const float px = ImGui::GetFontSize(), line_h = ImGui::GetTextLineHeightWithSpacing();
    const char* s = text.c_str();
    const char* end = s + text.size();
    float y = p.y;
    while (s < end) {
        const float w = std::max(width, px * 4);
        const char* cut = font->CalcWordWrapPositionA(1.0f, s, end, w);
        if (cut == s) cut = end;  // nothing fits: the rest on one line rather than loop
        // A word wider than the line (a Chinese sentence has no spaces to break at): cut it
        // between characters instead, at least one per line.
        while (cut > s && font->CalcTextSizeA(px, FLT_MAX, 0, s, cut).x > w) {
            const char* prev = cut - 1;
            while (prev > s && (static_cast<unsigned char>(*prev) & 0xC0) == 0x80) --prev;
            if (prev == s) break;
            cut = prev;
        }
        if (draw) put_text(ImVec2(p.x, y), col, std::string(s, cut));
        y += line_h;
        s = cut;
        while (s < end && *s == ' ') ++s;
    }
    return y - p.y;
}

}  // namespace

float put_wrapped(ImVec2 p, ImU32 col, const std::string& text, float width) {
    return wrap_lines(p, col, text, width, true);
}

float wrapped_height(const std::string& text, float width) {
    return wrap_lines(ImVec2(0, 0), 0, text, width, false);
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
