// Time: measured wall time of each step with the cache and without (both live in compare mode),
// the running total, the FLOPs of each step counted from the model's shapes, and the memory
// traffic of each step: bytes of weights and of K/V it reads, counted from the shapes
// (core/counts.h), against the position, beside the measured time, so that a decode step's
// time can be read against what it moves. Time to first token is the prefill step; time per
// output token the mean decode step. Every plot's x is the position the step reached.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/util/format.h"
#include "gui/engine_words.h"
#include "gui/panels.h"
#include "gui/plot.h"

namespace kvs::gui {

void draw_time(FrameContext& f) {
    const float fh = f.font_px;
    const Model* model = f.model();
    if (!model || f.snap.sessions.empty()) return;
    UiState& ui = f.ui;
    const int views = static_cast<int>(f.snap.sessions.size());

    if (ImGui::BeginTable("ttft", 5, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
        ImGui::TableSetupColumn("");
        ImGui::TableSetupColumn(tr("first token"));
        ImGui::TableSetupColumn(tr("per token"));
        ImGui::TableSetupColumn(tr("total"));
        ImGui::TableSetupColumn(tr("FLOPs"));
        ImGui::TableHeadersRow();
        for (int si = 0; si < views; ++si) {
            const SessionView& sv = f.snap.sessions[si];
            const int s = shown_step(sv, f.step);
            double ttft = NAN, decode = 0, total = 0, flops = 0;
            int n_dec = 0;
            for (int k = 0; k <= s; ++k) {
                const StepRecord& r = sv.trace.steps()[k];
                total += r.wall_seconds;
                flops += r.counts.flops;
                if (r.phase == Phase::Prefill)
                    ttft = r.wall_seconds;
                else {
                    decode += r.wall_seconds;
                    ++n_dec;
                }
            }
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushStyleColor(ImGuiCol_Text, f.theme.series[si]);
            ImGui::TextUnformatted(tr(session_label(sv)));
            ImGui::PopStyleColor();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_seconds(ttft).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(n_dec ? format_seconds(decode / n_dec).c_str() : "n/a");
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(s >= 0 ? format_seconds(total).c_str() : "n/a");
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(s >= 0 ? format_flops(flops).c_str() : "n/a");
        }
        ImGui::EndTable();
    }
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
        // A cached decode step on a backend with CUDA Graphs: both figures (core/session/trace.h).
        if (shown.graph_seconds > 0) {
            ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
            ImGui::TextWrapped(
                tr("step %d forward: %s op by op (timed per op), %s as one CUDA graph"), s,
                format_seconds(shown.forward_seconds).c_str(),
                format_seconds(shown.graph_seconds).c_str());
            ImGui::PopStyleColor();
        }
    }

    std::vector<PlotSeries> per_step, cumulative, flops, traffic;
    std::vector<double> positions;  // the position each step reached (its cache length)
    for (const auto& r : f.snap.sessions[0].trace.steps()) positions.push_back(r.kv.len);
    for (int si = 0; si < views; ++si) {
        const SessionView& sv = f.snap.sessions[si];
        PlotSeries t{tr(session_label(sv)), {}, f.theme.series[si], false};
        PlotSeries cum{tr(session_label(sv)), {}, f.theme.series[si], false};
        PlotSeries fl{tr(session_label(sv)), {}, f.theme.series[si], false};
        // Bytes a step reads: the K/V rows of every key, and the weights once. Counted the same
        // with the cache and without (the uncached pass reads each row it writes once), so one
        // series stands for both.
        PlotSeries kv{tr("K/V read"), {}, f.theme.series[si], false};
        double acc = 0;
        for (const auto& r : sv.trace.steps()) {
            t.y.push_back(r.wall_seconds);
            acc += r.wall_seconds;
            cum.y.push_back(acc);
            fl.y.push_back(r.counts.flops);
            kv.y.push_back(r.counts.kv_read_bytes);
        }
        per_step.push_back(std::move(t));
        cumulative.push_back(std::move(cum));
        flops.push_back(std::move(fl));
        if (si == 0) traffic.push_back(std::move(kv));
    }
    if (!f.snap.sessions[0].trace.empty()) {
        PlotSeries w{tr("weights read"), {}, f.theme.series_other, true};
        for (const auto& r : f.snap.sessions[0].trace.steps()) w.y.push_back(r.counts.weight_bytes);
        traffic.push_back(std::move(w));
    }
    if (views == 1 && !f.snap.sessions[0].trace.empty()) {
        // The mode that did not run, counted (not measured) from the same shapes.
        const SessionView& sv = f.snap.sessions[0];
        const bool cached = sv.mode == CacheMode::Cached;
        PlotSeries other{cached ? tr("without cache (counted)") : tr("with cache (counted)"),
                         {},
                         f.theme.series_other,
                         true};
        for (const auto& r : sv.trace.steps()) {
            if (r.phase == Phase::Prefill)
                other.y.push_back(r.counts.flops);
            else if (cached)
                other.y.push_back(model->count_forward(0, r.kv.len).flops);
            else
                other.y.push_back(model->count_forward(r.kv.len - 1, 1).flops);
        }
        flops.push_back(std::move(other));
    }

    // Where the K/V rows a step reads pass the weights it reads (counted from the shapes): past
    // it the cache's bytes are most of a decode step's memory traffic.
    if (!f.snap.sessions[0].trace.empty()) {
        const StepRecord& r =
            f.snap.sessions[0].trace.steps()[std::max(0, shown_step(f.snap.sessions[0], f.step))];
        const ModelConfig& c = model->config();
        const double per_token = 4.0 * c.n_layers * 2 * c.kv_dim();
        const double cross = per_token > 0 ? r.counts.weight_bytes / per_token : 0;
        char line[320];
        std::snprintf(line, sizeof line,
                      tr("step %d reads %s of weights and %s of K/V (counted); K/V reads pass the "
                         "weights' at position %.0f%s"),
                      r.index, format_bytes(r.counts.weight_bytes).c_str(),
                      format_bytes(r.counts.kv_read_bytes).c_str(), std::ceil(cross),
                      cross > c.seq_len ? tr(", beyond this model's context") : "");
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        ImGui::TextWrapped("%s", line);
        ImGui::PopStyleColor();
    }

    ImGui::Checkbox(tr("log scale"), &ui.settings.log_time);
    ImGui::SameLine(0, fh);
    draw_legend(flops, f.theme.muted_text);
    ImVec2 avail = ImGui::GetContentRegionAvail();
    // Four plots where each keeps room for its labels, else the running total gives way.
    const bool four = avail.x >= fh * 4 * 13;
    const int n_plots = four ? 4 : 3;
    const float w = (avail.x - (n_plots - 1) * fh * 0.5f) / n_plots;
    // The stage may cap the plot area's height (title above, x labels below it).
    if (f.caps.plot > 0) avail.y = std::min(avail.y, f.caps.plot + fh * 2.5f);
    PlotOptions o;
    o.legend = false;
    o.log_y = ui.settings.log_time;
    o.axis = f.theme.axis;
    o.grid = f.theme.grid;
    o.marker = f.theme.marker;
    o.text = f.theme.muted_text;
    o.marker_x = f.snap.sessions.empty() ? -1 : shown_step(f.snap.sessions[0], f.step);
    o.fmt = [](double v) { return format_seconds(v); };
    o.x_label = tr("position");
    o.x_values = positions;
    o.title = tr("time per step");
    draw_plot("##tstep", ImVec2(w, avail.y), per_step, o);
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
    o.title = tr("bytes read per step (counted)");
    o.fmt = [](double v) { return format_bytes(v); };
    o.legend = true;  // its own series: weights and K/V
    draw_plot("##bytes", ImVec2(w, avail.y), traffic, o);
    if (f.layout) {
        PlotRecord rec{"bytes", positions, {}};
        for (const auto& s : traffic) rec.series.push_back({s.label, s.y});
        f.layout->plots.push_back(std::move(rec));
        PlotRecord tr_rec{"time", positions, {}};
        for (const auto& s : per_step) tr_rec.series.push_back({s.label, s.y});
        f.layout->plots.push_back(std::move(tr_rec));
    }
}

}  // namespace kvs::gui
