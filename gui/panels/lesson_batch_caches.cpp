// Lesson 8's batch, cache by cache: the KV caches of the sweep's last run side by side, one per
// sequence, each as the BatchSession's slot held it after the run (lessonlib/batch_sweep.h's
// BatchSequence, read from the engine; nothing here computes a value). All grids share one
// column width and are framed to the longest cache, so a sequence that stopped early shows as a
// shorter fill: a batch's caches are ragged.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "gui/draw/text.h"
#include "gui/panels/kv_cache.h"
#include "gui/panels/lesson.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "gui/views/kv_grid.h"
#include "lessonlib/batch_sweep.h"

namespace kvs::gui {

void draw_batch_caches(FrameContext& f, const BatchTable& t, int kv_layer, ImVec2 size) {
    const auto& seqs = t.last_run;
    const int B = static_cast<int>(seqs.size());
    const Model* model = f.model();
    if (B == 0 || !model) return;
    const float fh = f.font_px;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const int layer = std::clamp(kv_layer < 0 ? f.ui.settings.layer : kv_layer, 0,
                                 std::max(0, seqs[0].kv.n_layers - 1));
    int longest = 1, shortest = seqs[0].kv.len;
    for (const auto& q : seqs) {
        longest = std::max(longest, q.kv.len);
        shortest = std::min(shortest, q.kv.len);
    }
    char b[256];
    std::snprintf(b, sizeof b,
                  tr("The KV caches after the last run (batch %d, layer %d): one per prompt, "
                     "%d to %d rows (prompt + new tokens)"),
                  B, layer, shortest, longest);
    const float head_h = put_wrapped(o, ImGui::GetColorU32(ImGuiCol_Text), b, size.x);
    const float key_y = o.y + head_h;
    const float key_h =
        put_wrapped(ImVec2(o.x, key_y), f.theme.muted_text,
                    tr("outlined: the row the last decode step wrote (a prompt that stopped "
                       "earlier wrote none); bar: the rows its query read"),
                    size.x);
    const float top = key_y + key_h + fh * 0.4f;

    // Each grid: three lines over it (the prompt's number, its rows as prompt + new tokens, how
    // it ended), the cells, the read bar. The K and V labels only in front of the first.
    const float gap = fh * 0.6f, lab_w = fh * 1.2f;
    const float gw = (size.x - lab_w - gap * (B - 1)) / B;
    const float cell_w = std::min(fh * 0.8f, std::max(1.0f, gw / longest));
    const int rows = 2 * seqs[0].kv.n_kv_heads * seqs[0].kv.head_dim;
    const float cells_top = top + fh * 3.65f;
    const float cell_h =
        rows > 0 ? std::max(0.5f, std::min(fh * 0.8f, (o.y + size.y - cells_top - fh) / rows)) : 0;
    auto& tex = f.textures[0].batch_kv;
    while (static_cast<int>(tex.size()) < B) tex.push_back(std::make_unique<KvTexture>());
    for (int i = 0; i < B; ++i) {
        const BatchSequence& q = seqs[i];
        const float x = o.x + i * (gw + gap) + (i > 0 ? lab_w : 0);
        const float text_x = i == 0 ? x + lab_w : x;
        std::snprintf(b, sizeof b, tr("prompt %d"), i + 1);
        const std::string name = b;
        dl->AddText(ImVec2(text_x, top), ImGui::GetColorU32(ImGuiCol_Text),
                    clipped(name, gw).c_str());
        std::snprintf(b, sizeof b, "%d = %d + %d", q.kv.len, q.prompt_len, q.kv.len - q.prompt_len);
        dl->AddText(ImVec2(text_x, top + fh * 1.15f), ImGui::GetColorU32(ImGuiCol_Text),
                    clipped(b, gw).c_str());
        dl->AddText(ImVec2(text_x, top + fh * 2.3f), f.theme.muted_text,
                    clipped(finish_reason_text(q.finish), gw).c_str());
        // The frame of the longest cache: the part of it this one did not fill stays empty.
        const ImVec2 a(text_x, cells_top);
        dl->AddRect(ImVec2(a.x - 1, a.y - 1),
                    ImVec2(a.x + cell_w * longest + 1, a.y + cell_h * rows + 1), f.theme.grid);
        const int last = q.kv.len - 1;
        const KvGridColumns g =
            kv_columns_of_cache(q.kv, q.kv_rows, q.in_last_step ? last : 0,
                                q.in_last_step ? last + 1 : 0, q.in_last_step ? last : -1);
        if (g.n > 0)
            draw_kv_cells(f, g, layer, *tex[i],
                          // The lesson run's serial too: a replay's table may reuse the address.
                          texture_key({reinterpret_cast<std::uintptr_t>(&t), f.snap.lesson.serial,
                                       std::uint64_t(i), std::uint64_t(layer), f.palette_id(), 88}),
                          ImVec2(i == 0 ? x : a.x, a.y), i == 0 ? lab_w : 0, cell_w, cell_h, name);
        // Hovering the lines over a grid gives the sequence's text.
        if (ImGui::IsWindowHovered() &&
            ImGui::IsMouseHoveringRect(ImVec2(text_x, top), ImVec2(text_x + gw, cells_top))) {
            std::string text;
            for (std::size_t k = 0; k < q.tokens.size(); ++k) {
                if (k == static_cast<std::size_t>(q.prompt_len)) text += " | ";
                text += f.piece(q.tokens[k]);
            }
            ImGui::SetTooltip("%s", FrameContext::drawable(text).c_str());
        }
    }
    ImGui::Dummy(ImVec2(size.x, size.y));
}

}  // namespace kvs::gui
