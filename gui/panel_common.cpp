// What every panel shares: token pieces, the step shown, recording where things were drawn.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>

#include "core/util/format.h"
#include "core/util/utf8.h"
#include "gui/engine_words.h"
#include "gui/panels.h"
#include "lessonlib/finish_words.h"

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

const char* finish_reason_text(FinishReason reason) {
    return finish_words(reason, report_lang(language()));
}

int shown_step(const SessionView& s, int step) {
    const int n = static_cast<int>(s.trace.steps().size());
    if (n == 0) return -1;
    return step < 0 ? n - 1 : std::min(step, n - 1);
}

const char* step_label(const SessionView& s, int step) {
    if (step < 0 || step >= static_cast<int>(s.trace.steps().size())) return tr(session_label(s));
    const StepRecord& r = s.trace.steps()[step];
    if (r.mask == AttentionMask::Bidirectional || s.view == CacheView::Bidirectional)
        return tr(session_label(s));
    return r.mode == CacheMode::Cached ? tr("with KV cache") : tr("without KV cache");
}

}  // namespace kvs::gui
