// KV cache: for one layer, the K and V blocks as a grid with one column per token (K channels
// above V channels), growing one column per decode step. The column(s) written at the step shown
// are outlined; a bar marks the cached rows the step's query reads. Below: the cache's shape and
// bytes, bytes against tokens, and what the same model would cost as MHA, GQA or MQA.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/model/kv_what_if.h"
#include "core/util/format.h"
#include "gui/draw/plot.h"
#include "gui/draw/text.h"
#include "gui/panels/kv_cache.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "gui/views/kv_grid.h"
#include "gui/views/panel_layout.h"
#include "gui/views/time_series.h"

namespace kvs::gui {
namespace {

void draw_bytes_and_what_if(FrameContext& f, Box area, const std::vector<KvVariant>& variants,
                            const KvShape& kv);

void kv_grid(FrameContext& f, int si, int layer, ImVec2 origin, ImVec2 size) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px;
    const SessionView& sv = f.snap.sessions[si];
    const int s = shown_step(sv, f.step);
    if (s < 0) return;
    // The grid's size and marks from step s; its columns only when the texture needs them
    // (draw_kv_cells): collecting them is a pass over every step.
    const KvGridColumns g = kv_grid_shape(sv.trace.steps(), s);
    if (g.n == 0 || g.kv_dim == 0) return;
    const StepRecord& st = sv.trace.steps()[s];
    char title[200];
    const int written = g.written_end - g.written_begin;
    if (st.phase == Phase::Prefill)
        std::snprintf(title, sizeof title,
                      tr("%s: the prefill wrote %d columns; its last query read %d"),
                      step_label(sv, s), written, g.query_pos + 1);
    else if (written == 1)
        std::snprintf(title, sizeof title, tr("%s: step %d wrote position %d, its query read %d"),
                      step_label(sv, s), s, g.written_begin + 1, g.query_pos + 1);
    else
        std::snprintf(title, sizeof title, tr("%s: step %d rebuilt all %d columns, read %d"),
                      step_label(sv, s), s, written, g.query_pos + 1);
    // Past KvTexels::kMaxColumns tokens a drawn column is a block of positions: the title says
    // how many (gui/views/kv_grid.h).
    if (const int stride = kv_texel_stride(g.n); stride > 1) {
        const std::size_t used = std::strlen(title);
        std::snprintf(title + used, sizeof title - used,
                      tr("; a column: %d tokens, largest |value|"), stride);
    }
    // Within the grid's width, ended by ".." where it is narrower than the sentence.
    dl->AddText(origin, ImGui::GetColorU32(ImGuiCol_Text), clipped(title, size.x, fh).c_str());

    const float lab_w = fh * 1.4f, top = origin.y + fh * 1.3f;
    const float avail_w = size.x - lab_w - fh * 0.5f;
    // Title above, the read bar below; the stage may cap the height (gui/views/panel_layout.h).
    float avail_h = size.y - fh * 1.3f - fh * 0.9f;
    if (f.caps.kv_grid > 0) avail_h = std::min(avail_h, f.caps.kv_grid);
    const int rows = 2 * g.kv_dim;
    // Columns keep a fixed width while they fit, so the grid visibly grows to the right.
    const float cell_w = std::min(fh * 0.8f, avail_w / std::max(g.n, 1));
    // Rows shrink below a pixel when they must (a kv_dim of 288 is 576 rows): the texture is
    // sampled down rather than the grid drawn past its box over what lies below it.
    const float cell_h = std::min(fh * 0.8f, std::max(avail_h, 0.0f) / rows);
    draw_kv_cells(
        f, g, layer, *f.textures[si].kv,
        texture_key({f.snap.generation, std::uint64_t(si), std::uint64_t(layer), f.palette_id(), 77,
                     // a bidirectional step's columns all change
                     st.mask == AttentionMask::Bidirectional ? std::uint64_t(s) + 1 : 0}),
        ImVec2(origin.x, top), lab_w, cell_w, cell_h, session_label(sv),
        [&] { return collect_kv_columns(sv.trace.steps(), s); });
}

}  // namespace

KvCellsView draw_kv_cells(FrameContext& f, const KvGridColumns& shape, int layer, KvTexture& tex,
                          std::uint64_t key, ImVec2 at, float lab_w, float cell_w, float cell_h,
                          const std::string& who, const std::function<KvGridColumns()>& collect) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px;
    const int rows = 2 * shape.kv_dim;
    const ImVec2 a(at.x + lab_w, at.y);
    const ImVec2 b(a.x + cell_w * shape.n, a.y + cell_h * rows);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool hovered = ImGui::IsWindowHovered() && shape.n > 0 && rows > 0 && mouse.x >= a.x &&
                         mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y;
    KvGridColumns collected;
    if (collect && (hovered || !tex.current(shape, key))) collected = collect();
    const KvGridColumns& g = collected.n > 0 ? collected : shape;
    tex.update(g, layer, f.pal.missing, key);
    dl->AddImage(tex.id(), a, b, ImVec2(0, 0), tex.uv_max());
    const float mid = a.y + cell_h * g.kv_dim;
    dl->AddLine(ImVec2(a.x, mid), ImVec2(b.x, mid), f.theme.panel_bg, std::max(1.0f, fh * 0.12f));
    if (lab_w <= 0) {
        // No room given for the K and V labels (a grid beside one that has them).
    } else if (mid - a.y >= fh * 0.9f) {
        dl->AddText(ImVec2(at.x, (a.y + mid) * 0.5f - fh * 0.5f), f.theme.muted_text, "K");
        dl->AddText(ImVec2(at.x, (mid + b.y) * 0.5f - fh * 0.5f), f.theme.muted_text, "V");
    } else if (b.y - a.y >= fh) {
        // Blocks shorter than a line: one label, K above V (shorter still: none; the hover
        // names each cell).
        const float px = std::max(fh * 0.5f, std::min(fh, (b.y - a.y) * 0.5f));
        dl->AddText(ImGui::GetFont(), px, ImVec2(at.x, a.y), f.theme.muted_text, "K");
        dl->AddText(ImGui::GetFont(), px, ImVec2(at.x, a.y + px), f.theme.muted_text, "V");
    }
    // Written at the step shown; the marks scale with the text (2 and 3 px at text 1).
    const float mark = std::max(2.0f, std::round(fh * 0.125f));
    if (g.written_end > g.written_begin)
        dl->AddRect(ImVec2(a.x + cell_w * g.written_begin - 1, a.y - mark),
                    ImVec2(a.x + cell_w * g.written_end + 1, b.y + mark), to_u32(f.pal.highlight),
                    0, 0, mark);
    // Read by the step's query: every cached row up to and including its own.
    const float ry = b.y + fh * 0.35f;
    if (g.query_pos >= 0)
        dl->AddLine(ImVec2(a.x, ry), ImVec2(a.x + cell_w * (g.query_pos + 1), ry),
                    to_u32(f.pal.read), std::max(3.0f, std::round(fh * 0.19f)));

    if (f.layout)
        f.layout->kv_grids.push_back({who, layer, g.n, rows, Rect{a.x, a.y, b.x - a.x, b.y - a.y},
                                      cell_w, cell_h, g.written_begin, g.written_end});
    if (hovered) {
        const int p = std::clamp(int((mouse.x - a.x) / cell_w), 0, g.n - 1);
        const int r = std::clamp(int((mouse.y - a.y) / cell_h), 0, rows - 1);
        const int kv = r / g.kv_dim, ch = r % g.kv_dim;
        const int head_dim = std::max(1, g.head_dim);
        const float v = kv_value(g, layer, kv, p, ch);
        ImGui::BeginTooltip();
        ImGui::Text(tr("position %d, %s, kv head %d, channel %d"), p + 1, kv ? "V" : "K",
                    ch / head_dim, ch % head_dim);
        if (std::isfinite(v))
            ImGui::Text(tr("value %.4f"), v);
        else
            ImGui::TextUnformatted(tr("not in the trace any more"));
        ImGui::Text(tr("colour scale: +-%.3g"), tex.scale());
        if (tex.stride() > 1) {
            const int p0 = p / tex.stride() * tex.stride();
            ImGui::Text(tr("this column: positions %d-%d, each channel its largest |value|"),
                        p0 + 1, std::min(g.n, p0 + tex.stride()));
        }
        ImGui::EndTooltip();
    }
    return {a, b, cell_w, cell_h};
}

void draw_kv_cache(FrameContext& f, KvCachePanel& panel) {
    const float fh = f.font_px;
    const Model* model = f.model();
    if (!model || f.snap.sessions.empty()) return;
    const ModelConfig& c = model->config();
    UiState& ui = f.ui;
    const int layer = panel.layer < 0 ? ui.settings.layer : std::min(panel.layer, c.n_layers - 1);
    const ImVec2 c0 = ImGui::GetCursorScreenPos(), ca = ImGui::GetContentRegionAvail();
    const Box content{c0.x, c0.y, ca.x, ca.y};

    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("Layer"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 9);
    char cur[48];
    std::snprintf(cur, sizeof cur, panel.layer < 0 ? tr("%d (as attention)") : "%d", layer);
    if (ImGui::BeginCombo("##kvlayer", cur)) {
        if (ImGui::Selectable(tr("as the attention panel"), panel.layer < 0)) panel.layer = -1;
        for (int l = 0; l < c.n_layers; ++l) {
            char b[16];
            std::snprintf(b, sizeof b, "%d", l);
            if (ImGui::Selectable(b, panel.layer == l)) panel.layer = l;
        }
        ImGui::EndCombo();
    }
    const SessionView& s0 = f.snap.sessions[0];
    const int s = shown_step(s0, f.step);
    const KvShape kv = s >= 0 ? s0.trace.steps()[s].kv : KvShape{};
    const std::vector<KvVariant> variants = kv_what_if(c);
    const float grids_h = kv_grids_h(content, fh, static_cast<int>(f.snap.sessions.size()),
                                     static_cast<int>(variants.size()));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    {
        // What the outline and the bar under each grid mean, beside the layer choice: in full
        // when the line has room, else in short, else on a line of its own (never cut at the
        // edge; a line more leaves the grids less room, so it is the last resort).
        const char* written = tr("written");
        const float sq = fh * 0.7f;
        const auto legend_w = [&](const char* read_words) {
            return sq + 4 + ImGui::CalcTextSize(written).x + fh * 0.8f + sq * 1.5f + 4 +
                   ImGui::CalcTextSize(read_words).x;
        };
        ImGui::SameLine();
        const float room = ImGui::GetContentRegionAvail().x;
        const char* read =
            room >= legend_w(tr("read by the query")) ? tr("read by the query") : tr("read");
        if (room < legend_w(read)) ImGui::NewLine();
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float y = p.y + fh * 0.3f;
        dl->AddRect(ImVec2(p.x, y), ImVec2(p.x + sq, y + sq), to_u32(f.pal.highlight), 0, 0,
                    std::max(2.0f, std::round(fh * 0.125f)));
        dl->AddText(ImVec2(p.x + sq + 4, p.y + fh * 0.15f), f.theme.muted_text, written);
        const float x2 = p.x + sq + 4 + ImGui::CalcTextSize(written).x + fh * 0.8f;
        dl->AddLine(ImVec2(x2, y + sq * 0.5f), ImVec2(x2 + sq * 1.5f, y + sq * 0.5f),
                    to_u32(f.pal.read), 3);
        dl->AddText(ImVec2(x2 + sq * 1.5f + 4, p.y + fh * 0.15f), f.theme.muted_text, read);
        ImGui::Dummy(ImVec2(x2 - p.x + sq * 1.5f + 4 + ImGui::CalcTextSize(read).x,
                            ImGui::GetFrameHeight()));
    }
    // Bytes from the shapes: each of K and V is [B, T, n_kv_heads, head_dim] float32 per layer.
    const double per_block = c.n_layers > 0 ? double(kv.bytes()) / (2.0 * c.n_layers) : 0;
    ImGui::TextWrapped(
        tr("K and V, each layer: [B=1, T=%d, n_kv_heads=%d, head_dim=%d] float32 = %s each. "
           "All: %s; full context (%d): %s"),
        kv.len, c.n_kv_heads, c.head_dim(), format_bytes(per_block).c_str(),
        format_bytes(double(kv.bytes())).c_str(), c.seq_len,
        format_bytes(double(kv_bytes_per_token(c, c.n_kv_heads)) * c.seq_len).c_str());

    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const int views = static_cast<int>(f.snap.sessions.size());
    const int n_var = static_cast<int>(variants.size());
    // Each grid: a title, the K and V rows, the read bar; the plot and the table below get what
    // the stage measured for them. Shown alone (key 3), the grids never get smaller cells than
    // the panel alone at the design text (f.reference): where the larger text's plot and table
    // would take their share, those go beside the grids, else after them (the panel scrolls).
    float grid_h = std::min(avail.y, grids_h);
    float grid_w = avail.x;
    Box rest{origin.x, origin.y + grid_h, avail.x, avail.y - grid_h};
    const float floor_h = views * (f.reference.kv_grid + kv_grid_frame_h(fh));
    if (f.ui.maximised == "kv" && f.reference.kv_grid > 0 && floor_h > grid_h + 0.5f) {
        grid_h = floor_h;
        // The grids' own width: a column per token, fh * 0.8 wide while they fit.
        const float natural = fh * 1.4f + fh * 0.8f * std::max(kv.len, 1) + fh * 0.5f;
        const float beside = avail.x - natural - fh * 0.6f;
        // Beside one session's grid, under its title (a line as wide as it needs).
        const float title = fh * 1.3f;
        if (views == 1 && beside >= fh * 24 && avail.y >= kv_table_h(fh, n_var) + fh * 6 + title) {
            grid_w = natural;
            rest = {origin.x + natural + fh * 0.6f, origin.y + title, beside, avail.y - title};
        } else {
            rest = {origin.x, origin.y + grid_h, avail.x,
                    std::max(avail.y - grid_h, kv_table_h(fh, n_var) + fh * 6)};
        }
    }
    if (s < 0) {
        ImGui::TextWrapped(
            "%s", tr("The cache is empty: the prefill writes one column per prompt token."));
    } else {
        for (int si = 0; si < views; ++si)
            kv_grid(f, si, layer, ImVec2(origin.x, origin.y + si * grid_h / views),
                    ImVec2(grid_w, grid_h / views - fh * 0.3f));
    }
    ImGui::SetCursorScreenPos(ImVec2(rest.x, rest.y));
    if (rest.h < fh * 3) {
        // The stage left no room for the bytes plot and the what-if table.
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        ImGui::TextUnformatted(tr("(key 3: maximise for the bytes plot and the what-if table)"));
        ImGui::PopStyleColor();
        return;
    }
    draw_bytes_and_what_if(f, rest, variants, kv);
}

namespace {

// The KV bytes plot and the what-if table in `area`: side by side where the table has its width
// beside the plot, else the table above the plot.
void draw_bytes_and_what_if(FrameContext& f, Box area, const std::vector<KvVariant>& variants,
                            const KvShape& kv) {
    const float fh = f.font_px;
    const Model* model = f.model();
    const ModelConfig& c = model->config();
    const SessionView& s0 = f.snap.sessions[0];
    const int s = shown_step(s0, f.step);
    // The what-if table's columns at this text (the model's own row with its "(this)" mark).
    char at[32];
    std::snprintf(at, sizeof at, "T=%d", std::max(kv.len, 0));
    const std::string mark = tr(" (this)");
    float cols[4] = {text_width(tr("layout"), fh), text_width("K/V", fh),
                     text_width(tr("per token"), fh), text_width(at, fh)};
    float cols_nomark = 0;
    for (const KvVariant& v : variants) {
        cols[0] = std::max(cols[0], text_width(v.kind + (v.is_model ? mark : ""), fh));
        cols_nomark = std::max(cols_nomark, text_width(v.kind, fh));
        cols[1] = std::max(cols[1], text_width(std::to_string(v.n_kv_heads), fh));
        cols[2] = std::max(cols[2], text_width(format_bytes(double(v.bytes_per_token)), fh));
        cols[3] =
            std::max(cols[3], text_width(format_bytes(double(v.bytes_per_token) * kv.len), fh));
    }
    const float pad = 8 * ImGui::GetStyle().CellPadding.x;
    const float table_min =
        std::max(text_width(tr("layout"), fh), cols_nomark) + cols[1] + cols[2] + cols[3] + pad;
    // Side by side: the plot 42% of the width, the table the rest; where the table's columns
    // would not fit there, the table above the plot, each the whole width.
    float plot_w = area.w * 0.42f;
    const bool stacked = area.w - plot_w - fh * 0.6f < table_min &&
                         area.h >= kv_table_h(fh, static_cast<int>(variants.size())) + fh * 6;
    if (stacked) plot_w = area.w;
    const float table_x = stacked ? area.x : area.x + plot_w + fh * 0.6f;
    const float table_w = stacked ? area.w : area.w - plot_w - fh * 0.6f;

    // What if the same model used more or fewer K/V heads.
    ImGui::SetCursorScreenPos(ImVec2(table_x, area.y));
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(table_x + table_w - ImGui::GetWindowPos().x);
    ImGui::TextUnformatted(tr("Same model, other K/V head counts"));
    ImGui::PopTextWrapPos();
    // The model's own row says "(this)" where the table has room for it; where it has not
    // (Chinese at a laptop's size: the cells cut the numbers), its layout is written in the
    // colour the plot's legend gives "this" instead.
    const bool mark_fits = cols[0] + cols[1] + cols[2] + cols[3] + pad <= table_w;
    if (ImGui::BeginTable("whatif", 4, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg,
                          ImVec2(table_w, 0))) {
        ImGui::TableSetupColumn(tr("layout"));
        ImGui::TableSetupColumn("K/V");
        ImGui::TableSetupColumn(tr("per token"));
        ImGui::TableSetupColumn(at);
        ImGui::TableHeadersRow();
        for (const KvVariant& v : variants) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            if (v.is_model && mark_fits)
                ImGui::TextUnformatted((v.kind + mark).c_str());
            else if (v.is_model)
                ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(f.theme.series[0]), "%s",
                                   v.kind.c_str());
            else
                ImGui::TextUnformatted(v.kind.c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%d", v.n_kv_heads);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_bytes(double(v.bytes_per_token)).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_bytes(double(v.bytes_per_token) * kv.len).c_str());
        }
        ImGui::EndTable();
    }
    ImGui::EndGroup();
    const float table_bottom = ImGui::GetItemRectMax().y + fh * 0.5f;

    // KV bytes against tokens, for each live session and the other layouts of the same model.
    std::vector<PlotSeries> series;
    PlotOptions o;
    o.title = tr("KV bytes vs tokens");
    o.fmt = [](double v) { return format_bytes(v); };
    o.x_label = tr("tokens");
    o.axis = f.theme.axis;
    o.grid = f.theme.grid;
    o.marker = f.theme.marker;
    o.text = f.theme.muted_text;
    o.marker_x = s;
    // Session 0's kept series (gui/views/time_series.h), brought up to its steps: a frame costs
    // the new steps, not the whole trace.
    TimeSeries& kept = f.textures[0].time;
    update_time_series(kept, f.snap.generation, *model, s0.mode, s0.trace.steps());
    series.push_back({tr("this"), kept.cache_bytes, f.theme.series[0], false});
    o.x_values = kept.positions;
    if (c.n_kv_heads != 1 && !o.x_values.empty())
        series.push_back({"MQA", kept.mqa_bytes, f.theme.series_other, true});
    if (c.n_kv_heads != c.n_heads && !o.x_values.empty())
        series.push_back({"MHA", kept.mha_bytes, f.theme.series[1], true});
    o.legend = false;
    const float plot_y = stacked ? table_bottom : area.y;
    ImGui::SetCursorScreenPos(ImVec2(area.x, plot_y));
    ImGui::BeginGroup();
    draw_legend(series, f.theme.muted_text, plot_w);
    const float plot_h = area.y + area.h - ImGui::GetCursorScreenPos().y;
    draw_plot("##kvbytes", ImVec2(plot_w, std::max(plot_h, fh * 5)), series, o);
    ImGui::EndGroup();
}

}  // namespace
}  // namespace kvs::gui
