// The lesson panel: a lesson's title, the current step's text (Markdown), Back / Next and where
// we are, then what the step did on the live engine: each @expect as a check mark, @batch as a
// plot and a table, @scale as a table, and the action log. The engine plays the steps on its
// worker thread (EngineWorker::play_lesson); this panel only shows what it published.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/session/gpu_step_view.h"
#include "core/util/format.h"
#include "gui/draw/markdown_view.h"
#include "gui/draw/plot.h"
#include "gui/panels/lesson.h"
#include "gui/state/strings.h"
#include "lessonlib/lesson_report.h"
#include "lessonlib/metric_words.h"
#include "lessonlib/roofline.h"

namespace kvs::gui {
namespace {

bool step_has(const LessonStep& s, DirectiveKind k) {
    return std::any_of(s.directives.begin(), s.directives.end(),
                       [&](const Directive& d) { return d.kind == k; });
}

MdStyle md_style(const FrameContext& f) {
    MdStyle s;
    s.mono = f.mono;
    s.bold = f.bold;
    s.text = ImGui::GetColorU32(ImGuiCol_Text);
    s.heading = f.theme.dark ? IM_COL32(150, 200, 255, 255) : IM_COL32(20, 80, 160, 255);
    s.muted = f.theme.muted_text;
    s.code_bg = f.theme.dark ? IM_COL32(255, 255, 255, 28) : IM_COL32(0, 0, 0, 22);
    return s;
}

std::string lesson_label(const LessonEntry& e, Lang lang) {
    const std::string& t = e.title[static_cast<int>(lang)];
    return std::to_string(e.number) + ". " + (t.empty() ? e.title[static_cast<int>(Lang::En)] : t);
}

void lesson_menu(FrameContext& f, LessonUi& L) {
    const float fh = f.font_px;
    const LessonEntry* cur = L.catalog.find(L.number);
    const std::string preview = cur ? lesson_label(*cur, f.ui.lang) : tr("Choose a lesson");
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - fh * 3.2f);
    if (ImGui::BeginCombo("##lessons", preview.c_str(), ImGuiComboFlags_HeightLarge)) {
        // Every lesson with its title in both languages: the other one muted.
        const Lang other = f.ui.lang == Lang::Zh ? Lang::En : Lang::Zh;
        for (const auto& e : L.catalog.entries()) {
            ImGui::PushID(e.number);
            if (ImGui::Selectable(lesson_label(e, f.ui.lang).c_str(), e.number == L.number))
                open_lesson(f.ui, L, f.worker, e.number, 0);
            // Chinese titles only where the font can draw them.
            if (other == Lang::En || ImGui::GetFont()->FindGlyphNoFallback(0x4E2D)) {
                const std::string& t = e.title[static_cast<int>(other)];
                if (!t.empty()) {
                    ImGui::SameLine(0, fh);
                    ImGui::TextDisabled("%s", t.c_str());
                }
            }
            ImGui::PopID();
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    if (ImGui::Button(tr("Close"), ImVec2(-1, 0))) close_lesson(f.ui);
}

// Each check as a sentence in the window's language (lessonlib/metric_words.h), the check itself
// under it in the lesson's check language. The log's checks are the step's @expect lines in order
// (the languages share them), so the words follow a language switch without a replay.
void draw_checks(FrameContext& f, const LessonStep& step, const StepOutcome& out,
                 LessonRecord* rec) {
    const float fh = f.font_px;
    const float wrap = ImGui::GetContentRegionAvail().x;
    std::vector<const Directive*> expects;
    for (const Directive& d : step.directives)
        if (d.kind == DirectiveKind::Expect) expects.push_back(&d);
    std::size_t k = 0;
    const ReportLang lang = report_lang(f.ui.lang);
    for (const LessonLogEntry& e : out.log) {
        if (e.kind == LessonLogEntry::Kind::Check) {
            std::string text = e.directive;
            if (text.rfind("expect ", 0) == 0) text = text.substr(7);
            const std::string words =
                k < expects.size() ? check_in_words(expects[k]->expect, lang) : e.words;
            ++k;
            ImGui::PushStyleColor(ImGuiCol_Text, e.pass ? f.theme.ok_text : f.theme.error_text);
            // ✓ and ✗, or plain letters in ImGui's own font (no such glyphs).
            const bool marks = ImGui::GetFont()->FindGlyphNoFallback(0x2713) != nullptr;
            ImGui::TextUnformatted(e.pass ? (marks ? "\xE2\x9C\x93" : "ok")
                                          : (marks ? "\xE2\x9C\x97" : "x"));
            ImGui::PopStyleColor();
            ImGui::SameLine(0, fh * 0.4f);
            ImGui::BeginGroup();
            ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap - fh * 1.4f);
            ImGui::TextUnformatted(words.empty() ? text.c_str() : words.c_str());
            if (!words.empty()) {
                ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
                ImGui::TextUnformatted(text.c_str());
                ImGui::PopStyleColor();
            }
            ImGui::PopTextWrapPos();
            ImGui::EndGroup();
            if (ImGui::IsItemHovered() && !e.lines.empty())
                ImGui::SetTooltip("%s", e.lines[0].c_str());
            if (!e.pass && !e.lines.empty()) {
                ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
                ImGui::Indent(fh * 1.4f);
                ImGui::TextWrapped("%s", e.lines[0].c_str());
                ImGui::Unindent(fh * 1.4f);
                ImGui::PopStyleColor();
            }
            if (rec) ++(e.pass ? rec->checks_passed : rec->checks_failed);
        } else if (e.kind == LessonLogEntry::Kind::Error) {
            ImGui::PushStyleColor(ImGuiCol_Text, f.theme.error_text);
            for (const auto& l : e.lines) {
                ImGui::TextWrapped("%s", l.c_str());
                if (rec) rec->errors.push_back(l);
            }
            ImGui::PopStyleColor();
        }
    }
}

// The sweep's plot, `plot` in size (0: the column's width), and its table, below it or
// (`beside`) to its right.
void draw_batch(FrameContext& f, const BatchTable& t, ImVec2 plot = ImVec2(0, 0),
                bool beside = false) {
    const float fh = f.font_px;
    ImGui::TextUnformatted(tr("Time per step against batch size"));
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    ImGui::TextWrapped(tr("measured on %s, the fastest of %d runs"), t.device.c_str(),
                       t.plan.repeats);
    ImGui::PopStyleColor();
    std::vector<double> sizes, prefill, decode;
    for (int b : t.plan.sizes) {
        sizes.push_back(b);
        const BatchRow* p = t.find(Phase::Prefill, b);
        const BatchRow* d = t.find(Phase::Decode, b);
        prefill.push_back(p ? p->seconds_per_step : NAN);
        decode.push_back(d ? d->seconds_per_step : NAN);
    }
    std::vector<PlotSeries> series = {{tr("prefill"), prefill, f.theme.series[0], false},
                                      {tr("decode step"), decode, f.theme.series[1], false}};
    PlotOptions o;
    o.x_values = sizes;
    o.title = "";
    o.log_y = true;
    o.fmt = [](double v) { return format_seconds(v); };
    o.x_label = tr("batch");
    o.label_every_x = true;
    o.axis = f.theme.axis;
    o.grid = f.theme.grid;
    o.marker = f.theme.marker;
    o.text = f.theme.muted_text;
    const float w = plot.x > 0 ? plot.x : ImGui::GetContentRegionAvail().x;
    const float plot_h = plot.y > 0 ? plot.y : std::max(fh * 8, w * 0.45f);
    ImGui::BeginGroup();
    const PlotDrawn drawn = draw_plot("##batchplot", ImVec2(w, plot_h), series, o);
    ImGui::EndGroup();
    if (f.layout) {
        PlotRecord r{"batch", sizes, {}, drawn.rect, drawn.log_y, drawn.legend};
        for (const auto& s : series)
            r.series.emplace_back(s.label, std::vector<double>(s.y.begin(), s.y.end()));
        f.layout->plots.push_back(std::move(r));
    }
    if (beside) ImGui::SameLine(0, fh);
    if (ImGui::BeginTable(
            "batchtable", 4,
            ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
        // The first column as wide as its longest label ("prefill 8"), the numbers share the rest.
        float label_w = ImGui::CalcTextSize(tr("batch")).x;
        for (const Phase ph : {Phase::Prefill, Phase::Decode})
            for (int b : t.plan.sizes) {
                char l[64];
                std::snprintf(l, sizeof l, "%s %d",
                              ph == Phase::Prefill ? tr("prefill") : tr("decode"), b);
                label_w = std::max(label_w, ImGui::CalcTextSize(l).x);
            }
        ImGui::TableSetupColumn(tr("batch"), ImGuiTableColumnFlags_WidthFixed, label_w);
        ImGui::TableSetupColumn(tr("rows per step"));
        ImGui::TableSetupColumn(tr("time per step"));
        ImGui::TableSetupColumn(tr("rows per second"));
        ImGui::TableHeadersRow();
        for (const Phase ph : {Phase::Prefill, Phase::Decode}) {
            for (int b : t.plan.sizes) {
                const BatchRow* r = t.find(ph, b);
                if (!r) continue;
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::Text("%s %d", ph == Phase::Prefill ? tr("prefill") : tr("decode"), b);
                ImGui::TableNextColumn();
                ImGui::Text("%.1f", r->rows_per_step);
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(format_seconds(r->seconds_per_step).c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(format_si(r->rows_per_second()).c_str());
            }
        }
        ImGui::EndTable();
    }
}

void row2(const char* what, const std::string& value) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", what);
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", value.c_str());
}

void draw_scale(FrameContext& f, const ScaleReport& r) {
    const ScaleQuery& q = r.query;
    const ModelConfig& c = r.model.config;
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    ImGui::TextWrapped(tr("%s on %s (counted from shapes, not measured)"), r.model.name.c_str(),
                       r.gpu.name.c_str());
    ImGui::PopStyleColor();
    char b[256];
    const int flags =
        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
    if (ImGui::BeginTable("scale", 2, flags)) {
        std::snprintf(b, sizeof b, tr("%d layers, %d heads, %d K/V heads of %d, dim %d"),
                      c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim(), c.dim);
        row2(tr("model"), b);
        std::snprintf(b, sizeof b, tr("%d tokens, batch %d, %d bytes per value"), q.context,
                      q.batch, q.bytes_per_value);
        row2(tr("context"), b);
        row2(tr("weights"), format_si(r.params) + " x " + std::to_string(q.bytes_per_value) +
                                " B = " + format_si(r.weight_bytes) + "B");
        row2(tr("KV cache per token"), format_bytes(r.kv_bytes_per_token));
        row2(tr("KV cache in all"), format_si(r.kv_bytes) + "B");
        std::snprintf(b, sizeof b, "%sB / %sB: %s", format_si(r.weight_bytes + r.kv_bytes).c_str(),
                      format_si(r.gpu.memory).c_str(), r.fits ? tr("fits") : tr("does not fit"));
        row2(tr("memory"), b);
        std::snprintf(b, sizeof b, tr("%.0f FLOP per byte"), r.ridge);
        row2(tr("ridge point"), b);
        ImGui::EndTable();
    }
    if (ImGui::BeginTable("scalephases", 3, flags)) {
        ImGui::TableSetupColumn("");
        ImGui::TableSetupColumn(tr("prefill"));
        ImGui::TableSetupColumn(tr("decode step"));
        ImGui::TableHeadersRow();
        auto row = [&](const char* what, auto value) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(what);
            for (const PhaseCost* p : {&r.prefill, &r.decode}) {
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(value(*p).c_str());
            }
        };
        row(tr("FLOPs"), [](const PhaseCost& p) { return format_si(p.flops); });
        row(tr("bytes"), [](const PhaseCost& p) { return format_si(p.bytes) + "B"; });
        row(tr("FLOP per byte"), [](const PhaseCost& p) {
            char x[32];
            std::snprintf(x, sizeof x, "%.1f", p.intensity);
            return std::string(x);
        });
        row(tr("compute time"),
            [](const PhaseCost& p) { return format_seconds(p.compute_seconds); });
        row(tr("memory time"), [](const PhaseCost& p) { return format_seconds(p.memory_seconds); });
        row(tr("bound by"), [](const PhaseCost& p) {
            return std::string(p.memory_bound ? tr("memory") : tr("compute"));
        });
        ImGui::EndTable();
    }
}

// @gpu: what a decode step asks of a GPU, each figure labelled counted or measured.
void draw_gpu(FrameContext& f, const GpuStepView& g) {
    const int flags =
        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("gpu", 2, flags)) return;
    // The figures get as much room as their labels: they are what the step is about.
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    char b[160];
    std::snprintf(b, sizeof b, "%d", g.decode_launches);
    row2(tr("kernel launches per decode step (counted)"), b);
    std::snprintf(b, sizeof b, tr("%d for %d tokens"), g.prefill_launches, g.prefill_rows);
    row2(tr("kernel launches of the prefill (counted)"), b);
    if (g.graph_launches > 0) {
        std::snprintf(b, sizeof b, tr("%d graph launch, %d kernels inside"), g.graph_launches,
                      g.graph_kernels);
        row2(tr("as a CUDA Graph (counted)"), b);
    }
    std::snprintf(b, sizeof b, tr("%s (median of %d steps)"), format_seconds(g.cpu_seconds).c_str(),
                  g.steps);
    row2(tr("decode step on this CPU (measured)"), b);
    if (g.device.empty()) {
        row2(tr("decode step on a GPU (measured)"), tr("not measured: no GPU answered"));
    } else {
        std::snprintf(b, sizeof b, tr("%s op by op, %s as one graph (%s)"),
                      format_seconds(g.device_seconds).c_str(),
                      format_seconds(g.graph_seconds).c_str(), g.device.c_str());
        row2(tr("decode step on a GPU (measured)"), b);
    }
    ImGui::EndTable();
    (void)f;
}

// What a step that ran did: its measurements (on the stage instead when the step put them
// there), then its checks and the engine's log.
void draw_step_outcome(FrameContext& f, const LessonStep& step, const StepOutcome& out,
                       LessonRecord* rec) {
    const LessonRun& run = f.snap.lesson;
    const float fh = f.font_px;
    // Measurements first (they are what the step is about), then the checks; on the stage
    // instead when the step put them there.
    if (step_has(step, DirectiveKind::Batch) && run.batch && !f.lesson_stage) {
        draw_batch(f, *run.batch);
        ImGui::Spacing();
    }
    if (step_has(step, DirectiveKind::Scale) && run.scale && !f.lesson_stage) {
        draw_scale(f, *run.scale);
        ImGui::Spacing();
    }
    if (step_has(step, DirectiveKind::Gpu) && run.gpu) {
        draw_gpu(f, *run.gpu);
        ImGui::Spacing();
    }
    if (out.checks > 0) {
        char b[96];
        std::snprintf(b, sizeof b, tr("%d of %d checks hold"), out.checks - out.failed, out.checks);
        ImGui::PushStyleColor(ImGuiCol_Text, out.failed ? f.theme.error_text : f.theme.muted_text);
        ImGui::TextUnformatted(b);
        ImGui::PopStyleColor();
    }
    draw_checks(f, step, out, rec);
    bool any_action = false;
    for (const auto& e : out.log)
        any_action = any_action || (e.kind == LessonLogEntry::Kind::Action && !e.lines.empty());
    if (any_action && ImGui::CollapsingHeader(tr("What the engine did (numbers)"))) {
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        for (const auto& e : out.log) {
            if (e.kind != LessonLogEntry::Kind::Action) continue;
            ImGui::TextWrapped("@%s", e.directive.c_str());
            ImGui::Indent(fh);
            for (const auto& l : e.lines) ImGui::TextWrapped("%s", l.c_str());
            ImGui::Unindent(fh);
        }
        ImGui::PopStyleColor();
    }
}

}  // namespace

std::vector<std::pair<int, int>> lesson_step_heads(FrameContext& f, LessonUi& L) {
    const LessonRun& run = f.snap.lesson;
    std::vector<std::pair<int, int>> heads;
    // Only once the engine has played the step: before that the heatmaps show the step before.
    if (!f.ui.show_lesson || L.number == 0 || run.number != L.number || run.played() < L.step)
        return heads;
    const auto lesson = L.catalog.lesson(L.number, f.ui.lang);
    if (!lesson || L.step >= static_cast<int>(lesson->steps.size())) return heads;
    for (const Directive& d : lesson->steps[L.step].directives)
        if (d.kind == DirectiveKind::Highlight) heads.emplace_back(d.n, d.head);
    if (heads.size() < 2) heads.clear();
    return heads;
}

void draw_lesson_stage(FrameContext& f, LessonStagePanel& panel, int kv_layer) {
    const LessonRun& run = f.snap.lesson;
    const float fh = f.font_px;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    if (run.batch) {
        // The plot as large as the stage allows beside its table, and under both the last run's
        // KV caches side by side (gui/panels/lesson_batch_caches.cpp).
        const bool caches = !run.batch->last_run.empty();
        const float caches_h = caches ? std::floor(std::max(avail.y * 0.4f, fh * 12)) : 0;
        // The table at least the width its four columns of numbers need at this text size
        // (about 20 text heights; at a projector's text 2 more than 40% of the stage); where
        // that leaves the plot under 40% of the width, the table goes under the plot.
        const bool beside = fh * 20 <= avail.x * 0.6f;
        const float table_w = std::max(std::min(avail.x * 0.4f, fh * 30), fh * 20);
        const float plot_w = beside ? avail.x - table_w - fh : avail.x;
        const float table_h =
            beside ? 0
                   : (2 * run.batch->plan.sizes.size() + 1.5f) * ImGui::GetFrameHeightWithSpacing();
        const float plot_h =
            std::max(fh * 6, std::min(avail.y - caches_h - fh * 4.5f - table_h, plot_w * 0.75f));
        draw_batch(f, *run.batch, ImVec2(plot_w, plot_h), beside);
        ImGui::Spacing();
        if (caches) {
            ImGui::Spacing();
            const ImVec2 left = ImGui::GetContentRegionAvail();
            draw_batch_caches(f, *run.batch, kv_layer, ImVec2(left.x, std::max(left.y, fh * 6)));
        }
    }
    if (run.scale) {
        draw_scale(f, *run.scale);
        // Under the tables, the roofline where their prefill and decode sit (and where they
        // would sit at other batch sizes and prompt lengths), as large as the stage leaves.
        ImGui::Spacing();
        const ImVec2 left = ImGui::GetContentRegionAvail();
        if (left.y > fh * 10) {
            if (panel.roofline_for != run.scale) {
                panel.roofline = roofline_of_scale(*run.scale);
                panel.roofline_for = run.scale;
            }
            draw_roofline(f, panel.roofline, ImVec2(std::min(left.x, left.y * 2.2f), left.y));
        }
    }
    if (!run.batch && !run.scale) ImGui::TextWrapped("%s", tr("the engine is playing this step"));
}

LessonCatalog& lesson_catalog(LessonUi& L) {
    if (!L.catalog_loaded) {
        L.catalog.load();
        L.catalog_loaded = true;
    }
    return L.catalog;
}

void open_lesson(UiState& ui, LessonUi& L, EngineWorker& worker, int number, int step) {
    lesson_catalog(L);
    const bool next = ui.show_lesson && number == L.number && step == L.step + 1;
    if (number != L.number) {
        L.answers.clear();  // another lesson: its questions are asked afresh
        L.typed.clear();
    }
    ui.show_lesson = true;
    L.number = number;
    ui.settings.lesson = number;
    std::string why;
    const auto lesson = L.catalog.lesson(number, ui.lang, &why);
    if (!lesson || lesson->steps.empty()) return;  // the panel shows why
    L.step = std::clamp(step, 0, static_cast<int>(lesson->steps.size()) - 1);
    ui.settings.lesson_step = L.step;
    ui.playing = false;
    ui.view_step = -1;
    // Next builds on the steps before it; anything else makes a step in flight useless.
    if (!next) worker.cancel();
    // A question not yet answered: the step runs once the learner has predicted.
    const Directive* ask = lesson->steps[L.step].ask();
    if (ask && !L.answers.count(L.step)) return;
    worker.play_lesson(lesson, number, L.step);
}

void lesson_next(FrameContext& f, LessonUi& L) {
    if (L.number == 0) return;
    const auto lesson = L.catalog.lesson(L.number, f.ui.lang);
    if (!lesson || L.step + 1 >= static_cast<int>(lesson->steps.size())) return;
    open_lesson(f.ui, L, f.worker, L.number, L.step + 1);
}

void lesson_back(FrameContext& f, LessonUi& L) {
    if (L.number == 0 || L.step == 0) return;
    open_lesson(f.ui, L, f.worker, L.number, L.step - 1);
}

void close_lesson(UiState& ui) {
    // The lesson and step are kept in memory: L (or the toolbar) reopens them there.
    ui.settings.lesson = 0;
    ui.settings.lesson_step = 0;
    ui.show_lesson = false;
}

void draw_lesson(FrameContext& f, LessonPanel& panel, LessonUi& L) {
    UiState& ui = f.ui;
    lesson_catalog(L);
    const float fh = f.font_px;
    lesson_menu(f, L);
    if (L.number == 0) {
        ImGui::TextWrapped("%s", L.catalog.entries().empty() ? L.catalog.error().c_str()
                                                             : tr("Choose a lesson above."));
        return;
    }
    std::string why;
    const auto lesson = L.catalog.lesson(L.number, ui.lang, &why);
    if (!lesson || lesson->steps.empty()) {
        const std::string text = why.empty() ? tr("this lesson has no steps") : why;
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.error_text);
        ImGui::TextWrapped("%s", text.c_str());
        ImGui::PopStyleColor();
        if (f.layout) {
            f.layout->lesson.number = L.number;
            f.layout->lesson.errors.push_back(text);
        }
        return;
    }
    const int n = static_cast<int>(lesson->steps.size());
    L.step = std::clamp(L.step, 0, n - 1);
    const LessonStep& step = lesson->steps[L.step];
    const LessonRun& run = f.snap.lesson;
    const bool mine = run.number == L.number;
    const StepOutcome* out =
        mine && L.step < static_cast<int>(run.outcomes.size()) ? &run.outcomes[L.step] : nullptr;
    LessonRecord* rec = f.layout ? &f.layout->lesson : nullptr;
    const MdStyle style = md_style(f);

    // Title, where we are, and the step's title. While a question waits for its answer the
    // menu above names the lesson, and the question has its title's room.
    const bool asking = step.ask() && !L.answers.count(L.step);
    if (!asking)
        draw_md_line(parse_inline(lesson->title), style, ImGui::GetContentRegionAvail().x,
                     style.heading, 1.2f, true);
    char progress[96];
    std::snprintf(progress, sizeof progress, tr("step %d of %d"), L.step + 1, n);
    ImGui::ProgressBar(float(L.step + 1) / n, ImVec2(-1, fh * 1.1f), progress);
    draw_md_line(parse_inline(step.title), style, ImGui::GetContentRegionAvail().x, style.text,
                 1.05f, true);
    if (rec) {
        rec->number = L.number;
        rec->title = lesson->title;
        rec->step = L.step + 1;
        rec->steps = n;
        rec->step_title = step.title;
        rec->running = !out && !(step.ask() && !L.answers.count(L.step));
        if (out && L.step == run.played()) rec->shown_panel = run.panel;
    }

    // The text, then what the step did, scrolled together above the buttons.
    // The text scrolls on its own; what the step did sits below it, always in view (as much
    // of it as fits in about half the panel, then it scrolls too).
    const float footer = ImGui::GetFrameHeightWithSpacing() + fh * 0.4f;
    const float body_h = ImGui::GetContentRegionAvail().y - footer;
    // A question waiting for its answer has the room it needs first: it is all the step shows
    // yet (the text before it keeps what is left, and scrolls; less than a line, none). Else
    // what the step did takes up to half.
    float results_h = std::clamp(panel.results_h, ImGui::GetFrameHeightWithSpacing() * 1.5f,
                                 asking ? body_h : body_h * 0.55f);
    const float text_h = body_h - results_h - fh * 0.3f;
    if (asking && text_h < fh * 1.3f) results_h = body_h + fh * 0.3f;  // the text's gap too
    const std::string key = std::to_string(L.number) + "/" + lang_code(ui.lang) + "/" +
                            std::to_string(L.step) + "/" + lesson->file;
    if (panel.blocks_key != key) {
        // With an @ask, the prose before it now and the rest once the question is answered.
        const std::size_t at =
            step.ask_at >= 0 ? static_cast<std::size_t>(step.ask_at) : step.prose.size();
        panel.blocks = parse_markdown((L.step == 0 ? lesson->intro + "\n\n" : std::string()) +
                                      step.prose.substr(0, at));
        panel.blocks_after = parse_markdown(step.prose.substr(at));
        panel.blocks_key = key;
    }
    if (results_h <= body_h) {
        ImGui::BeginChild("lessontext", ImVec2(0, text_h), false);
        if (panel.scrolled_for != L.step) {
            ImGui::SetScrollY(0);
            panel.scrolled_for = L.step;
        }
        draw_markdown(panel.blocks, style);
        if (!step.ask() || L.answers.count(L.step)) draw_markdown(panel.blocks_after, style);
        ImGui::EndChild();
    }

    ImGui::BeginChild("lessonresults", ImVec2(0, results_h), true);
    // The step's question first, in view whatever the text's scroll: before the step runs it is
    // all this area shows, then the learner's answer beside the engine's.
    if (step.ask()) draw_lesson_question(f, L, step, out, rec, style);
    if (step.ask() && !L.answers.count(L.step)) {
        // Nothing ran yet: no checks to show. The question in view whole, or not.
        if (rec)
            rec->ask_fits =
                ImGui::GetCursorPosY() - ImGui::GetScrollY() <= ImGui::GetWindowHeight() + 0.5f;
    } else if (!out) {
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        const char* dots[] = {"", ".", "..", "..."};
        ImGui::Text("%s%s",
                    mine && run.cancelled ? tr("stopped") : tr("the engine is playing this step"),
                    run.cancelled ? "" : dots[int(ImGui::GetTime() * 3) % 4]);
        ImGui::PopStyleColor();
    } else {
        draw_step_outcome(f, step, *out, rec);
    }
    // How tall the results were, for next frame's split.
    panel.results_h = ImGui::GetCursorPosY() + ImGui::GetStyle().WindowPadding.y;
    ImGui::EndChild();

    // Back / Next.
    const float bw = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
    ImGui::BeginDisabled(L.step == 0);
    if (ImGui::Button(tr("< Back (B)"), ImVec2(bw, 0))) lesson_back(f, L);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(L.step + 1 >= n);
    if (ImGui::Button(tr("Next (N) >"), ImVec2(bw, 0))) lesson_next(f, L);
    ImGui::EndDisabled();
}

}  // namespace kvs::gui
