// Causal against bidirectional, measured: for the step shown, how far each layer's earlier K/V
// rows moved when one token was appended (StepRecord::kv_delta_k / kv_delta_v, measured by the
// session), one line per session: a bar and the number per layer, then what it means. Drawn by
// the attention panel in the bidirectional view (core/session/cache_view.h).
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "gui/draw/text.h"
#include "gui/panels/attention.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "gui/views/inside_attention_text.h"

namespace kvs::gui {

float draw_kv_deltas(FrameContext& f, ImVec2 at, float width, bool draw) {
    const float fh = f.font_px;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    // Measured only (draw false): the height the same lines would take.
    auto put_wrapped = [draw](ImVec2 p, ImU32 col, const std::string& text, float w) {
        return draw ? kvs::gui::put_wrapped(p, col, text, w) : wrapped_height(text, w);
    };
    auto put_text = [draw](ImVec2 p, ImU32 col, const std::string& text) {
        if (draw) kvs::gui::put_text(p, col, text);
    };
    float y = at.y;
    double mx = 1e-9;
    std::vector<const StepRecord*> shown;
    for (const SessionView& sv : f.snap.sessions) {
        const int s = shown_step(sv, f.step);
        const StepRecord* r = s >= 0 ? &sv.trace.steps()[s] : nullptr;
        shown.push_back(r && !r->kv_delta_k.empty() ? r : nullptr);
        if (shown.back())
            for (double d : r->kv_delta_k) mx = std::max(mx, d);
    }
    if (std::none_of(shown.begin(), shown.end(), [](const StepRecord* r) { return r; })) {
        y += put_wrapped(ImVec2(at.x, y), f.theme.muted_text,
                         tr("After a decode step, each side measures how far the earlier tokens' "
                            "K/V rows moved when one token was appended (Space: step)."),
                         width);
        return y - at.y;
    }
    y += put_wrapped(ImVec2(at.x, y), ImGui::GetColorU32(ImGuiCol_Text),
                     tr("max |ΔK| per layer, the earlier tokens' K rows after one token more "
                        "(measured):"),
                     width);
    const float bar_w = fh * 3.0f;
    for (std::size_t i = 0; i < shown.size(); ++i) {
        const StepRecord* r = shown[i];
        if (!r) continue;
        const SessionView& sv = f.snap.sessions[i];
        const std::string label =
            std::string(step_label(sv, r->index)) + (f.ui.lang == Lang::Zh ? "：" : ":");
        float x = at.x;
        const float lw = text_width(label, fh);
        put_text(ImVec2(x, y), f.theme.series[i % 2], label);
        x += lw + fh * 0.6f;
        for (std::size_t l = 0; l < r->kv_delta_k.size(); ++l) {
            char b[48];
            std::snprintf(b, sizeof b, "L%zu %s", l, fmt_number(float(r->kv_delta_k[l])).c_str());
            const float item = bar_w + fh * 0.3f + text_width(b, fh) + fh;
            if (x + item > at.x + width && x > at.x + lw + fh) {
                x = at.x + fh;
                y += fh * 1.35f;
            }
            const float frac = static_cast<float>(r->kv_delta_k[l] / mx);
            if (draw) {
                dl->AddRect(ImVec2(x, y + fh * 0.2f), ImVec2(x + bar_w, y + fh * 1.0f),
                            f.theme.axis);
                if (frac > 0)
                    dl->AddRectFilled(ImVec2(x, y + fh * 0.2f),
                                      ImVec2(x + std::max(1.0f, bar_w * frac), y + fh * 1.0f),
                                      f.theme.series[i % 2]);
            }
            put_text(ImVec2(x + bar_w + fh * 0.3f, y), ImGui::GetColorU32(ImGuiCol_Text), b);
            x += item;
        }
        y += fh * 1.35f;
    }
    y += put_wrapped(ImVec2(at.x, y), f.theme.muted_text,
                     tr("Causal: no earlier row moves, so a cache of K and V is exact. "
                        "Bidirectional: layer 0's K/V come from the token embeddings alone and do "
                        "not move; from layer 1 on each row takes in the new token through "
                        "attention, so a cache of them would be stale."),
                     width);
    return y - at.y;
}

}  // namespace kvs::gui
