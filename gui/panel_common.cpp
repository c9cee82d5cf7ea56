// What every panel shares: token pieces, the step shown, recording where things were drawn.
#include <imgui.h>

#include <algorithm>

#include "gui/panels.h"

namespace kvs::gui {

std::string FrameContext::piece(int id) const {
    const Model* m = model();
    if (!m || id < 0 || id >= m->tokenizer().vocab_size()) return "?";
    // llama2.c's BOS piece is "\n<s>\n": the newlines would only clutter a label.
    if (id == m->tokenizer().bos()) return "<s>";
    return m->tokenizer().piece(id);
}

std::uint64_t FrameContext::palette_id() const {
    return (theme.dark ? 1u : 0u) | (static_cast<std::uint64_t>(pal.scale) << 1);
}

void FrameContext::record_panel(const char* name) {
    if (!layout) return;
    const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    layout->panels.emplace_back(name, Rect{p.x, p.y, s.x, s.y});
}

int shown_step(const SessionView& s, int step) {
    const int n = static_cast<int>(s.trace.steps().size());
    if (n == 0) return -1;
    return step < 0 ? n - 1 : std::min(step, n - 1);
}

const char* step_label(const SessionView& s, int step) {
    if (step < 0 || step >= static_cast<int>(s.trace.steps().size())) return s.label.c_str();
    return s.trace.steps()[step].mode == CacheMode::Cached ? "with KV cache" : "without KV cache";
}

}  // namespace kvs::gui
