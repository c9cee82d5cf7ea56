// Time: measured wall time of each step with the cache and without (both live in compare mode),
// the running total, the FLOPs of each step counted from the model's shapes, and the memory
// traffic of each step: bytes of weights and of K/V it reads, counted from the shapes
// (core/counts.h), against the position, beside the measured time, so that a decode step's
// time can be read against what it moves. Time to first token is the prefill step; time per
// output token the mean decode step. Every plot's x is the position the step reached.
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/util/format.h"
#include "gui/draw/plot.h"
#include "gui/draw/text.h"
#include "gui/panels/time.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "gui/views/time_series.h"

namespace kvs::gui {
namespace {

// "K/V read and written, <whose>": a session's (or a counted mode's) line of the bytes plot.
std::string kv_moved_label(const char* whose) {
    char b[200];
    std::snprintf(b, sizeof b, tr("K/V read and written, %s"), whose);
    return b;
}

// Each session's row: its name, then the time to the first token, per token, in total, and the
// counted FLOPs, read from the kept series' running sums (update_time_series first).
void draw_time_table(FrameContext& f) {
    const int views = static_cast<int>(f.snap.sessions.size());
    const char* heads[4] = {tr("first token"), tr("per token"), tr("total"), tr("FLOPs")};
    std::vector<std::array<std::string, 5>> rows;
    for (int si = 0; si < views; ++si) {
        const SessionView& sv = f.snap.sessions[si];
        const TimeSeries& t = f.textures[si].time;
        const int s = std::min(shown_step(sv, f.step), static_cast<int>(t.total.size()) - 1);
        const int n_dec = s >= 0 ? t.decode_steps[s] : 0;
        rows.push_back({tr(session_label(sv)), format_seconds(s >= 0 ? t.first_token[s] : NAN),
                        n_dec ? format_seconds(t.decode_total[s] / n_dec) : "n/a",
                        s >= 0 ? format_seconds(t.total[s]) : "n/a",
                        s >= 0 ? format_flops(t.flops_total[s]) : "n/a"});
    }
    // The numbers keep their width; where the names beside them would not fit (the bidirectional
    // view's longer names in a narrow column), the names wrap instead of the numbers being cut.
    const float pad = ImGui::GetStyle().CellPadding.x * 2;
    float name_w = 0, nums_w = 0;
    for (const auto& row : rows) name_w = std::max(name_w, ImGui::CalcTextSize(row[0].c_str()).x);
    for (int c = 1; c < 5; ++c) {
        float w = ImGui::CalcTextSize(heads[c - 1]).x;
        for (const auto& row : rows) w = std::max(w, ImGui::CalcTextSize(row[c].c_str()).x);
        nums_w += w + pad;
    }
    const bool wrap_names = name_w + pad + nums_w > ImGui::GetContentRegionAvail().x;
    if (ImGui::BeginTable("ttft", 5, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
        ImGui::TableSetupColumn("", wrap_names ? ImGuiTableColumnFlags_WidthStretch : 0);
        for (const char* h : heads) ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        for (int si = 0; si < views; ++si) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushStyleColor(ImGuiCol_Text, f.theme.series[si]);
            if (wrap_names)
                ImGui::TextWrapped("%s", rows[si][0].c_str());
            else
                ImGui::TextUnformatted(rows[si][0].c_str());
            ImGui::PopStyleColor();
            for (int c = 1; c < 5; ++c) {
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(rows[si][c].c_str());
            }
        }
        ImGui::EndTable();
    }
}

// Where and how the times were measured, and which way a GPU step ran.
void draw_measured_on(FrameContext& f) {
    const int views = static_cast<int>(f.snap.sessions.size());
    // Where the times were measured: a line of its own (a table column would cut it off).
    // How: each step's time is the median of several runs of that step
    // (core/session/step_timing.h); hover for the shown step's spread.
    if (!f.snap.sessions[0].trace.empty()) {
        const SessionView& sv = f.snap.sessions[0];
        const int s = std::max(0, shown_step(sv, f.step));
        const StepRecord& shown = sv.trace.steps()[s];
        char how[200];
        std::snprintf(how, sizeof how, tr("%s; each step the median of %d runs"),
                      shown.device.c_str(), shown.timing_runs);
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        ImGui::TextWrapped("%s %s", tr("measured on"), how);
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(tr("step %d: median %s of %d runs, fastest %s, slowest %s"), s,
                              format_seconds(shown.forward_seconds).c_str(), shown.timing_runs,
                              format_seconds(shown.forward_min_seconds).c_str(),
                              format_seconds(shown.forward_max_seconds).c_str());
        // Compare mode: the two prefills are the same work (the cache plays no part yet); say
        // how they were timed, so a difference between them is read as the machine's.
        if (views == 2 && sv.mode != f.snap.sessions[1].mode && !f.snap.sessions[1].trace.empty()) {
            const bool in_turn = sv.trace.steps()[0].timed_in_turn &&
                                 f.snap.sessions[1].trace.steps()[0].timed_in_turn;
            ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
            ImGui::TextWrapped("%s", in_turn ? tr("the two prefills are the same work: timed in "
                                                  "turn, the difference is the machine's")
                                             : tr("the two prefills are the same work, timed at "
                                                  "different moments (compare began mid-run)"));
            ImGui::PopStyleColor();
        }
        // A step on a GPU backend: which way it ran, with its kernel launches, and the other ways
        // a cached decode step was measured beside it (core/session/trace.h).
        if (shown.kernel_launches > 0) {
            ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
            const char* ran =
                shown.path == PassPath::Fused ? tr("step %d ran fused: %s, %d kernel launches")
                : shown.path == PassPath::Graph
                    ? tr("step %d ran as one CUDA graph: %s, %d kernel launches")
                    : tr("step %d ran op by op, every op timed: %s, %d kernel launches");
            ImGui::TextWrapped(ran, s, format_seconds(shown.forward_seconds).c_str(),
                               shown.kernel_launches);
            if (shown.path == PassPath::PerOp && shown.graph_seconds > 0)
                ImGui::TextWrapped(tr("the same step as one CUDA graph: %s, %d kernel launches"),
                                   format_seconds(shown.graph_seconds).c_str(),
                                   shown.graph_kernel_launches);
            if (shown.path == PassPath::PerOp && shown.fused_seconds > 0)
                ImGui::TextWrapped(tr("the same step fused: %s, %d kernel launches"),
                                   format_seconds(shown.fused_seconds).c_str(),
                                   shown.fused_kernel_launches);
            ImGui::PopStyleColor();
        }
    }
}

// Where the K/V rows a step reads pass the weights it reads (counted from the shapes): past it
// the cache's bytes are most of a decode step's memory traffic.
void draw_kv_passes_weights(FrameContext& f, const Model& model) {
    if (!f.snap.sessions[0].trace.empty()) {
        const StepRecord& r =
            f.snap.sessions[0].trace.steps()[std::max(0, shown_step(f.snap.sessions[0], f.step))];
        const ModelConfig& c = model.config();
        const double cross = kv_reads_pass_weights_at(r.counts, c);
        char line[320];
        std::snprintf(line, sizeof line,
                      tr("step %d reads %s of weights and %s of K/V (counted); K/V reads pass the "
                         "weights' at position %.0f%s"),
                      r.index, format_bytes(r.counts.weight_bytes).c_str(),
                      format_bytes(r.counts.kv_read_bytes).c_str(), cross,
                      cross > c.seq_len ? tr(", beyond this model's context") : "");
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        ImGui::TextWrapped("%s", line);
        ImGui::PopStyleColor();
    }
}

}  // namespace

void draw_time(FrameContext& f) {
    const float fh = f.font_px;
    const Model* model = f.model();
    if (!model || f.snap.sessions.empty()) return;
    UiState& ui = f.ui;
    const int views = static_cast<int>(f.snap.sessions.size());

    // Each session's values, extended by the steps since the last frame (gui/views/time_series.h):
    // a frame costs the new steps, not the whole trace. The table reads their running sums.
    for (int si = 0; si < views; ++si)
        update_time_series(f.textures[si].time, f.snap.generation, *model, f.snap.sessions[si].mode,
                           f.snap.sessions[si].trace.steps());
    draw_time_table(f);
    draw_measured_on(f);
    auto kept = [&](int si) -> const TimeSeries& { return f.textures[si].time; };
    std::vector<PlotSeries> per_step, cumulative, flops, traffic;
    const std::vector<double>& positions = kept(0).positions;  // the cache length each step reached
    for (int si = 0; si < views; ++si) {
        const SessionView& sv = f.snap.sessions[si];
        const TimeSeries& ts = kept(si);
        per_step.push_back({tr(session_label(sv)), ts.wall, f.theme.series[si], false});
        cumulative.push_back({tr(session_label(sv)), ts.total, f.theme.series[si], false});
        flops.push_back({tr(session_label(sv)), ts.flops, f.theme.series[si], false});
        // Bytes of K/V a step moves: the rows of every key it reads and the rows it writes
        // (core/model/counts.h). A cached decode step reads the T cached rows and writes one; the
        // uncached step reads as many but writes all T again: each session its own series.
        PlotSeries kv{kv_moved_label(tr(session_label(sv))), ts.kv_bytes, f.theme.series[si],
                      false};
        // Sessions that move the same bytes (the bidirectional view's two uncached sessions)
        // would hide one another's line: the later one is drawn dashed over the earlier
        // (compared as the series grow, not each frame: same_kv_bytes).
        std::vector<SeriesAgreement>& same = f.textures[si].kv_same;
        same.resize(si);
        for (int e = 0; e < si; ++e)
            if (same_kv_bytes(same[e], kept(e), ts)) kv.dashed = true;
        traffic.push_back(std::move(kv));
    }
    if (!f.snap.sessions[0].trace.empty())
        traffic.push_back({tr("weights read"), kept(0).weight_bytes, f.theme.series_other, true});
    if (views == 1 && !f.snap.sessions[0].trace.empty()) {
        // The mode that did not run, counted (not measured) from the same shapes: its FLOPs and
        // its K/V traffic (the uncached step at position T reads and writes T rows, the cached
        // one reads T and writes 1).
        const bool cached = f.snap.sessions[0].mode == CacheMode::Cached;
        flops.push_back({cached ? tr("without cache (counted)") : tr("with cache (counted)"),
                         kept(0).other_flops, f.theme.series_other, true});
        traffic.insert(
            traffic.begin() + 1,
            {kv_moved_label(cached ? tr("without cache (counted)") : tr("with cache (counted)")),
             kept(0).other_kv, f.theme.series[cached ? 1 : 0], true});
    }

    draw_kv_passes_weights(f, *model);

    ImGui::Checkbox(tr("always log scale"), &ui.settings.log_time);
    ImGui::SameLine(0, fh);
    draw_legend(flops, f.theme.muted_text);
    ImVec2 avail = ImGui::GetContentRegionAvail();
    // Four plots where each keeps room for its labels, else the running total gives way.
    const bool four = avail.x >= fh * 4 * 13;
    const int n_plots = four ? 4 : 3;
    const float w = (avail.x - (n_plots - 1) * fh * 0.5f) / n_plots;
    // The stage may cap the plot area's height (title above, x labels below it).
    if (f.caps.plot > 0) avail.y = std::min(avail.y, f.caps.plot + fh * 2.5f);
    // Shown alone (key 4), the plots keep the height they have alone at the design text
    // (f.reference): where the larger text's table and labels leave less, the panel scrolls.
    // Text grown to the room (alone_zoom) is what the room holds: no floor then.
    const bool zoomed = ImGui::GetFontSize() > ImGui::GetFont()->FontSize + 0.5f;
    if (f.ui.maximised == "time" && f.reference.plot > 0 && !zoomed)
        avail.y = std::max(avail.y, f.reference.plot + fh * 2.5f);
    // Never shorter than its title, legend and a few lines' plot: a short panel scrolls to it.
    avail.y = std::max(avail.y, fh * 12);
    PlotOptions o;
    o.legend = false;
    // Each plot linear where that shows its lines' gaps as they are (the weights' 128x the K/V
    // rows' is a line near the floor), log where its values span more (gui/views/plot_scale.h);
    // its title says which.
    o.log_y = true;
    o.choose_scale = !ui.settings.log_time;
    o.axis = f.theme.axis;
    o.grid = f.theme.grid;
    o.marker = f.theme.marker;
    o.text = f.theme.muted_text;
    o.marker_x = f.snap.sessions.empty() ? -1 : shown_step(f.snap.sessions[0], f.step);
    o.fmt = [](double v) { return format_seconds(v); };
    o.x_label = tr("position");
    o.x_values = positions;
    o.title = tr("time per step");
    const PlotDrawn step_plot = draw_plot("##tstep", ImVec2(w, avail.y), per_step, o);
    if (four) {
        ImGui::SameLine(0, fh * 0.5f);
        o.title = tr("time so far");
        draw_plot("##tcum", ImVec2(w, avail.y), cumulative, o);
    }
    ImGui::SameLine(0, fh * 0.5f);
    o.title = tr("FLOPs per step (counted)");
    o.fmt = [](double v) { return format_flops(v); };
    draw_plot("##flops", ImVec2(w, avail.y), flops, o);
    ImGui::SameLine(0, fh * 0.5f);
    o.title = tr("bytes per step (counted)");
    o.fmt = [](double v) { return format_bytes(v); };
    o.legend = true;  // its own series: weights, and each session's K/V
    const PlotDrawn bytes = draw_plot("##bytes", ImVec2(w, avail.y), traffic, o);
    if (f.layout) {
        PlotRecord rec{"bytes", positions, {}, bytes.rect, bytes.log_y, bytes.legend};
        for (const auto& s : traffic)
            rec.series.push_back({s.label, std::vector<double>(s.y.begin(), s.y.end())});
        f.layout->plots.push_back(std::move(rec));
        PlotRecord tr_rec{"time", positions, {}, step_plot.rect, step_plot.log_y, {}};
        for (const auto& s : per_step)
            tr_rec.series.push_back({s.label, std::vector<double>(s.y.begin(), s.y.end())});
        f.layout->plots.push_back(std::move(tr_rec));
    }
}

}  // namespace kvs::gui
