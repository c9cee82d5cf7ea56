// The map of the step: a column per layer, the new token's path across their heads, then the
// two ways of running the step as rows of counts under them, the way the step ran first and in
// its colour, the queries each layer needs emphasised (the why-not-Q chain ends at the last
// layer). Every number is core's step_map; a click on a column opens Inside attention there.
#include "gui/panels/step_map.h"

#include <imgui.h>

#include <algorithm>

#include "core/session/step_map.h"
#include "gui/draw/text.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "gui/views/step_map_view.h"

namespace kvs::gui {
namespace {

// The widest cell and label of the view, at text height fh.
void widths(const StepMapView& v, float fh, float& label_w, float& cell_w) {
    label_w = 0;
    cell_w = 0;
    for (const std::string& h : v.heads) cell_w = std::max(cell_w, text_width(h, fh));
    for (const MapWay* w : {&v.cached, &v.uncached})
        for (const MapLine& l : w->lines) {
            label_w = std::max(label_w, text_width(l.label, fh));
            for (const std::string& c : l.cells) cell_w = std::max(cell_w, text_width(c, fh));
        }
    label_w += fh;
    cell_w += fh * 1.6f;  // room for the arrow between heads
}

// One way's title and lines; returns the y under them.
float draw_way(FrameContext& f, const MapWay& w, const MapColumns& cols, ImVec2 o, float y,
               float fh, ImU32 colour) {
    const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), muted = f.theme.muted_text;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float row_h = fh * 1.2f;
    dl->AddRectFilled(ImVec2(o.x, y + fh * 0.25f), ImVec2(o.x + fh * 0.5f, y + fh * 0.95f), colour);
    put_text(ImVec2(o.x + fh * 0.8f, y), w.ran ? ink : muted,
             clipped(w.title, cols.width() - fh * 0.8f));
    y += row_h;
    if (!w.possible) return y;
    for (const MapLine& l : w.lines) {
        put_text(ImVec2(o.x + fh * 0.5f, y), muted, clipped(l.label, cols.label_w - fh * 0.6f));
        for (int k = 0; k < cols.n && k < static_cast<int>(l.cells.size()); ++k) {
            const std::string cell = clipped(l.cells[k], cols.col_w - fh * 0.4f);
            const float tw = text_width(cell, fh);
            put_text(ImVec2(o.x + cols.x_of(k) + (cols.col_w - tw) * 0.5f, y),
                     l.emphasis ? f.theme.warning_text : (w.ran ? ink : muted), cell);
        }
        y += row_h;
    }
    return y;
}

}  // namespace

void open_map_layer(UiState& ui, ExplainUi& x, int layer) {
    open_inside_attention(ui, x, 0, layer, ui.settings.head, -1);
    if (ui.maximised == "map") ui.maximised = "inside";
}

namespace {

// How much larger than the text the map may be drawn in a box `w` x `h`: its rows and columns
// grow with the factor, its wrapped lines (the title, the note) about with its square (taller
// lines, more of them), at most 2.5.
float map_growth(const StepMapView& v, float w, float h, float fh, float table_w) {
    const float rows = static_cast<float>(v.cached.lines.size() + v.uncached.lines.size() + 2);
    const float fixed = fh * (1.6f + 1.2f * rows + 0.6f);
    const float wrapped = wrapped_height(v.title, w) + wrapped_height(v.note, w) + fh * 0.5f;
    float g = std::min(2.5f, w / table_w);
    while (g > 1.0f && fixed * g + wrapped * g * g > h) g -= 0.05f;
    return std::max(g, 1.0f);
}

}  // namespace

void draw_step_map(FrameContext& f, StepMapPanel& p, ExplainUi& x) {
    if (f.snap.sessions.empty() || !f.model()) return;
    const SessionView& s0 = f.snap.sessions[0];
    const int s = shown_step(s0, f.step);
    if (s < 0) {
        ImGui::TextWrapped("%s", tr("The map of a step appears after the prefill."));
        return;
    }
    const StepRecord& r = s0.trace.steps()[s];
    const int n_layers = f.model()->config().n_layers;
    const StepMap m = step_map(r, n_layers);
    const int newest = r.new_tokens.empty() ? r.token_out : r.new_tokens.back();
    const StepMapView v = step_map_view(m, f.label(newest));
    const float avail = ImGui::GetContentRegionAvail().x;
    float label_w = 0, cell_w = 0;
    widths(v, f.font_px, label_w, cell_w);
    // A panel with room to spare (alone in the window) draws the map larger, up to 2.5 times
    // the text, as far as both its width and its height allow.
    const float grow = map_growth(v, avail, ImGui::GetContentRegionAvail().y, f.font_px,
                                  label_w + n_layers * cell_w);
    ImGui::SetWindowFontScale(grow);
    const float fh = f.font_px * grow;
    label_w *= grow;
    cell_w *= grow;
    ImGui::TextWrapped("%s", v.title.c_str());
    // The labels give way first (cut to what is left), never below a third of the width.
    label_w = std::min(label_w, std::max(avail * 0.33f, avail - n_layers * cell_w));
    const MapColumns cols = map_columns(n_layers, avail, label_w, cell_w);
    const ImVec2 o = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 muted = f.theme.muted_text;
    const float head_h = fh * 1.6f;
    // The path: the token enters layer 0, each layer's output is the next one's input.
    put_text(ImVec2(o.x, o.y + fh * 0.2f), muted,
             clipped(tr("the new token's path"), cols.label_w - fh * 0.6f));
    for (int k = 0; k < cols.n; ++k) {
        const float x0 = o.x + cols.x_of(k) + fh * 0.4f, x1 = x0 + cols.col_w - fh * 1.2f;
        dl->AddRect(ImVec2(x0, o.y), ImVec2(x1, o.y + fh * 1.4f), f.theme.axis, 3);
        const std::string h = clipped(v.heads[k], x1 - x0 - fh * 0.2f);
        put_text(ImVec2((x0 + x1 - text_width(h, fh)) * 0.5f, o.y + fh * 0.2f),
                 ImGui::GetColorU32(ImGuiCol_Text), h);
        // The arrow to the next layer (after the last: to the logits).
        const float ay = o.y + fh * 0.7f;
        dl->AddLine(ImVec2(x1, ay), ImVec2(x1 + fh * 0.7f, ay), f.theme.marker, 2);
        dl->AddTriangleFilled(ImVec2(x1 + fh * 0.8f, ay), ImVec2(x1 + fh * 0.5f, ay - fh * 0.25f),
                              ImVec2(x1 + fh * 0.5f, ay + fh * 0.25f), f.theme.marker);
    }
    float y = o.y + head_h;
    const MapWay& first = m.mode == CacheMode::Cached ? v.cached : v.uncached;
    const MapWay& second = m.mode == CacheMode::Cached ? v.uncached : v.cached;
    auto colour = [&](const MapWay& w) {
        return w.ran ? f.theme.series[&w == &v.cached ? 0 : 1] : f.theme.series_other;
    };
    y = draw_way(f, first, cols, o, y, fh, colour(first));
    y = draw_way(f, second, cols, o, y + fh * 0.3f, fh, colour(second));
    // Each column is a button: hovered, it is outlined; clicked, Inside attention opens there.
    const float col_h = y - o.y;
    int hovered = -1;
    for (int k = 0; k < cols.n; ++k) {
        const ImVec2 a(o.x + cols.x_of(k), o.y), b(a.x + cols.col_w, o.y + col_h);
        ImGui::SetCursorScreenPos(a);
        ImGui::PushID(k);
        if (ImGui::InvisibleButton("layer", ImVec2(cols.col_w, col_h))) open_map_layer(f.ui, x, k);
        ImGui::PopID();
        if (ImGui::IsItemHovered()) hovered = k;
        if (k == hovered || (x.open && x.layer == k))
            dl->AddRect(a, b, k == hovered ? f.theme.marker : f.theme.axis, 4, 0, 2);
        if (f.layout) {
            const LayerMap& l = m.layers[k];
            f.layout->map.columns.push_back({k,
                                             {a.x, a.y, cols.col_w, col_h},
                                             l.cached.queries.count,
                                             l.cached.queries_needed,
                                             l.cached.kv_read.count,
                                             l.cached.kv_written.count,
                                             l.uncached.queries.count,
                                             l.uncached.queries_needed,
                                             l.uncached.kv_recomputed.count});
        }
    }
    p.hovered = hovered;
    ImGui::SetCursorScreenPos(ImVec2(o.x, y + fh * 0.3f));
    ImGui::PushStyleColor(ImGuiCol_Text, muted);
    ImGui::TextWrapped("%s", v.note.c_str());
    ImGui::PopStyleColor();
    ImGui::SetWindowFontScale(1.0f);
    if (f.layout) {
        f.layout->map.drawn = true;
        f.layout->map.step = s;
        f.layout->map.ran = m.mode == CacheMode::Cached ? "cached" : "uncached";
    }
}

}  // namespace kvs::gui
