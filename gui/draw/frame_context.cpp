// What every panel reads of a frame: token pieces as labels, text the font can draw, recording
// where a panel was drawn.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>

#include "core/util/format.h"
#include "core/util/utf8.h"
#include "gui/draw/frame_context.h"

namespace kvs::gui {

std::string FrameContext::piece(int id) const {
    const Model* m = model();
    if (!m || id < 0 || id >= m->tokenizer().vocab_size()) return "?";
    // llama2.c's BOS piece is "\n<s>\n": the newlines would only clutter a label.
    if (id == m->tokenizer().bos()) return "<s>";
    return m->tokenizer().piece(id);
}

std::string FrameContext::label(int id) const {
    return drawable(visible_piece(piece(id)));
}

std::string FrameContext::drawable(const std::string& v) {
    const ImFont* font = ImGui::GetFont();
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        const std::size_t n = std::max<std::size_t>(1, utf8_sequence_length(v, i));
        const unsigned char c = static_cast<unsigned char>(v[i]);
        if (c < 0x80 || n == 1) {
            out += v[i++];
            continue;
        }
        char32_t cp = c & (0x7F >> n);
        for (std::size_t k = 1; k < n; ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(v[i + k]) & 0x3F);
        // ImGui draws '?' for what its atlas lacks (emoji, rare characters): say which instead.
        if (cp > IM_UNICODE_CODEPOINT_MAX || !font ||
            !font->FindGlyphNoFallback(static_cast<ImWchar>(cp))) {
            char b[16];
            std::snprintf(b, sizeof b, "<U+%04X>", static_cast<unsigned>(cp));
            out += b;
        } else {
            out.append(v, i, n);
        }
        i += n;
    }
    return out;
}

std::uint64_t FrameContext::palette_id() const {
    return (theme.dark ? 1u : 0u) | (static_cast<std::uint64_t>(pal.scale) << 1);
}

void FrameContext::record_panel(const char* name) {
    if (!layout) return;
    const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    layout->panels.emplace_back(name, Rect{p.x, p.y, s.x, s.y});
}

}  // namespace kvs::gui
