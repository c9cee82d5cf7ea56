// Time: measured wall time of each step with the cache and without (both live in compare mode),
// the running total, and the FLOPs of each step counted from the model's shapes. Time to first
// token is the prefill step; time per output token the mean decode step.
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
            ImGui::TextUnformatted(tr(session_label(sv.mode)));
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

    std::vector<PlotSeries> per_step, cumulative, flops;
    for (int si = 0; si < views; ++si) {
        const SessionView& sv = f.snap.sessions[si];
        PlotSeries t{tr(session_label(sv.mode)), {}, f.theme.series[si], false};
        PlotSeries cum{tr(session_label(sv.mode)), {}, f.theme.series[si], false};
        PlotSeries fl{tr(session_label(sv.mode)), {}, f.theme.series[si], false};
        double acc = 0;
        for (const auto& r : sv.trace.steps()) {
            t.y.push_back(r.wall_seconds);
            acc += r.wall_seconds;
            cum.y.push_back(acc);
            fl.y.push_back(r.counts.flops);
        }
        per_step.push_back(std::move(t));
        cumulative.push_back(std::move(cum));
        flops.push_back(std::move(fl));
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

    ImGui::Checkbox(tr("log scale"), &ui.settings.log_time);
    ImGui::SameLine(0, fh);
    draw_legend(flops, f.theme.muted_text);
    ImVec2 avail = ImGui::GetContentRegionAvail();
    const float w = (avail.x - 2 * fh * 0.5f) / 3;
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
    o.x_label = tr("step");
    o.title = tr("time per step");
    draw_plot("##tstep", ImVec2(w, avail.y), per_step, o);
    ImGui::SameLine(0, fh * 0.5f);
    o.title = tr("time so far");
    draw_plot("##tcum", ImVec2(w, avail.y), cumulative, o);
    ImGui::SameLine(0, fh * 0.5f);
    o.title = tr("FLOPs per step (counted)");
    o.fmt = [](double v) { return format_flops(v); };
    draw_plot("##flops", ImVec2(w, avail.y), flops, o);
}

}  // namespace kvs::gui
