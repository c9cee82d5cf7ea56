// Toolbar: model, backend, cache mode, stepping, the step slider, and the status banner.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/session/trace_reader.h"
#include "core/util/format.h"
#include "core/util/install_paths.h"
#include "gui/actions/actions.h"
#include "gui/actions/export.h"
#include "gui/actions/open_model.h"
#include "gui/draw/text.h"
#include "gui/panels/messages.h"
#include "gui/panels/toolbar.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "lessonlib/engine_messages.h"

namespace kvs::gui {
namespace {

struct ModelChoice {
    const char* label;
    const char* spec;
};

// The recorded runs assets/traces/ ships (the default model with the KV cache, and both
// sessions of compare mode), where the assets are.
struct RecordedChoice {
    const char* label;
    const char* file;
};
const RecordedChoice kRecorded[] = {
    {tr_later("recorded: our default model, with KV cache"), "default-cached.trace.json"},
    {tr_later("recorded: our default model, with and without KV cache"),
     "default-compare.trace.json"}};

std::string shipped_trace(const char* file) {
    for (const auto& assets : data_folder_candidates("KVSCOPE_ASSETS", "assets"))
        if (is_file(assets / "traces" / file)) return (assets / "traces" / file).string();
    return {};
}

std::string model_label(const std::string& spec) {
    if (spec == "toy") return tr("toy example");
    if (spec == "default") return tr("our default model");
    if (spec == "stories260K") return "stories260K";
    if (spec.empty()) return tr("(none)");
    return std::filesystem::path(spec).filename().string();
}

const std::vector<std::string>& available() {
    static const std::vector<std::string> names = available_model_names();
    return names;
}

}  // namespace

static void draw_toolbar_setup(FrameContext& f);
static void draw_toolbar_steps(FrameContext& f, LessonUi& lesson, bool compact);
static void draw_toolbar_status(FrameContext& f, bool compact);
static void draw_status_line(FrameContext& f);

static float button_w(const char* label) {
    return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
}

void draw_toolbar(FrameContext& f, LessonUi& lesson) {
    const bool compact = f.toolbar_compact;
    if (!compact) draw_toolbar_setup(f);
    draw_toolbar_steps(f, lesson, compact);
    draw_toolbar_status(f, compact);
}

void draw_toolbar_setup(FrameContext& f) {
    const EngineSnapshot& s = f.snap;
    UiState& ui = f.ui;
    const float fh = f.font_px;
    // Row 1: what runs, where, and how.
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("Model"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 11);
    const bool file_mode = ui.settings.model == "file" && !s.replay;
    const std::string current = s.replay
                                    ? std::string(tr("recorded run")) + ": " +
                                          std::filesystem::path(s.replay->path).filename().string()
                                : file_mode ? tr("Open file...")
                                            : model_label(s.model_spec);
    if (ImGui::BeginCombo("##model", current.c_str())) {
        const ModelChoice choices[] = {{tr("toy example"), "toy"},
                                       {tr("our default model"), "default"},
                                       {"stories260K", "stories260K"}};
        for (const auto& c : choices) {
            const bool have =
                c.spec == std::string("default") || c.spec == std::string("toy") ||
                std::find(available().begin(), available().end(), c.spec) != available().end();
            if (!have) continue;
            if (ImGui::Selectable(c.label, s.model_spec == c.spec && !file_mode))
                open_model_by_name(f, c.spec);
        }
        for (const auto& r : kRecorded) {
            const std::string path = shipped_trace(r.file);
            if (path.empty()) continue;
            if (ImGui::Selectable(tr(r.label), s.replay && s.replay->path == path))
                open_replay_file(ui, f.worker, path);
        }
        if (ImGui::Selectable(tr("Open file..."), file_mode)) ui.settings.model = "file";
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered() && f.model()) {
        const Model* m = f.model();
        const ModelConfig& c = m->config();
        std::string weights =
            m->is_toy() ? std::string(tr("hand-made weights"))
                        : format_bytes(m->parameter_count() * 4.0) + " " + tr("of weights");
        // Compact weights (a quantised GGUF as stored): what is kept, what a token reads.
        if (const auto* lm = dynamic_cast<const TransformerModel*>(m); lm && lm->compact().held()) {
            char b[256];
            std::snprintf(b, sizeof b, tr("%s of weights kept as %s; a decode token reads %s"),
                          format_bytes(double(kept_parameter_bytes(c, lm->compact()))).c_str(),
                          lm->compact().types().c_str(),
                          format_bytes(double(weight_bytes_per_token(c, lm->compact()))).c_str());
            weights = b;
        }
        ImGui::SetTooltip(
            tr("%s: %d layers, %d heads (%d K/V), head size %d, dim %d, vocab %d, context %d, %s"),
            m->name().c_str(), c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim(), c.dim,
            c.vocab_size, c.seq_len, weights.c_str());
    }
    if (file_mode) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(fh * 16);
        const bool enter =
            ImGui::InputTextWithHint("##path", tr(".bin, .gguf, folder or trace .json"),
                                     &ui.model_path, ImGuiInputTextFlags_EnterReturnsTrue);
        ImGui::SameLine();
        if ((ImGui::Button(tr("Open")) || enter) && !ui.model_path.empty())
            open_model_file(f.ui, f.worker, ui.model_path);
    }

    ImGui::SameLine(0, fh * 1.2f);
    ImGui::TextUnformatted(tr("Backend"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 5);
    static const char* kBackends[] = {"auto", "cpu", "cuda"};
    if (ImGui::BeginCombo("##backend", s.backend_asked.c_str())) {
        for (const char* b : kBackends)
            if (ImGui::Selectable(b, s.backend_asked == b)) {
                ui.settings.backend = b;
                ui.playing = false;
                f.worker.set_backend(b);
            }
        ImGui::EndCombo();
    }

    ImGui::SameLine(0, fh * 1.2f);
    ImGui::TextUnformatted(tr("KV cache"));
    const CacheView modes[] = {CacheView::On, CacheView::Off, CacheView::Compare,
                               CacheView::Bidirectional};
    const char* names[] = {tr("on"), tr("off"), tr("compare both"), tr("bidirectional")};
    for (int i = 0; i < 4; ++i) {
        // A radio button: its circle (a frame's height) and its label.
        same_line_or_wrap(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                          text_width(names[i], fh));
        if (ImGui::RadioButton(names[i], s.cache == modes[i]) && s.cache != modes[i]) {
            ui.settings.cache = modes[i];
            f.worker.set_cache(modes[i]);
        }
    }

    const char* theme_label = ui.settings.theme == "dark" ? tr("Light") : tr("Dark");
    same_line_or_wrap(button_w(theme_label) + button_w("A-") + button_w("A+") + fh, fh * 1.2f);
    if (ImGui::Button(theme_label))
        ui.settings.theme = ui.settings.theme == "dark" ? "light" : "dark";
    ImGui::SameLine();
    // The App rebuilds the fonts when the text size changes.
    if (ImGui::Button("A-"))
        ui.settings.font_scale = std::max(0.5f, ui.settings.font_scale - 0.125f);
    ImGui::SameLine();
    if (ImGui::Button("A+"))
        ui.settings.font_scale = std::min(4.0f, ui.settings.font_scale + 0.125f);
}

void draw_toolbar_steps(FrameContext& f, LessonUi& lesson, bool compact) {
    const EngineSnapshot& s = f.snap;
    UiState& ui = f.ui;
    const float fh = f.font_px;
    // Row 2: stepping and scrubbing.
    const int n = s.steps();
    const bool have_prompt = !s.sessions.empty() && !s.sessions[0].prompt_tokens.empty();
    ImGui::BeginDisabled(s.sessions.empty());
    if (ImGui::Button(tr("Reset"))) request_reset(f);
    ImGui::SameLine();
    ImGui::BeginDisabled(n > 0 || !have_prompt || s.busy);
    if (ImGui::Button(tr("Prefill"))) request_prefill(f);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!have_prompt || s.busy || s.finished());
    if (ImGui::Button(tr("Step"))) request_step(f);
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button(ui.playing ? tr("Pause") : tr("Play"), ImVec2(fh * 3.5f, 0))) {
        ui.playing = !ui.playing && !s.finished();
        ui.view_step = -1;
    }
    ImGui::EndDisabled();
    if (!compact) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(fh * 7);
        ImGui::SliderFloat("##speed", &ui.settings.play_speed, 0.5f, 30.0f, tr("%.1f steps/s"),
                           ImGuiSliderFlags_Logarithmic);
    }

    // The step slider and its button together, on the next line when they do not fit.
    const char* latest = ui.view_step < 0 ? tr("latest") : tr("to latest");
    const float slider_w = fh * (compact ? 10 : 16);
    same_line_or_wrap(slider_w + ImGui::GetStyle().ItemSpacing.x + button_w(latest), fh * 1.2f);
    ImGui::BeginDisabled(n == 0);
    int shown = f.step;
    ImGui::SetNextItemWidth(slider_w);
    char fmt[64];
    if (n > 0)
        std::snprintf(fmt, sizeof fmt, tr("step %%d of %d"), n - 1);
    else
        std::snprintf(fmt, sizeof fmt, "%s", tr("no steps yet"));
    if (ImGui::SliderInt("##step", &shown, 0, std::max(0, n - 1), fmt,
                         ImGuiSliderFlags_AlwaysClamp))
        ui.view_step = shown >= n - 1 ? -1 : shown;
    ImGui::SameLine();
    if (ImGui::Button(latest)) ui.view_step = -1;
    ImGui::EndDisabled();

    if (!compact) {
        same_line_or_wrap(button_w(tr("Keys (F1)")), fh * 1.2f);
        if (ImGui::Button(tr("Keys (F1)"))) ui.show_help = !ui.show_help;
    }
    const char* lesson_label = ui.show_lesson ? tr("Hide lesson (L)") : tr("Lessons (L)");
    same_line_or_wrap(button_w(lesson_label));
    if (ImGui::Button(lesson_label)) {
        if (ui.show_lesson)
            close_lesson(ui);
        else
            open_lesson(ui, lesson, f.worker, std::max(1, lesson.number), lesson.step);
    }
    // Each language names itself, so either can find the way back.
    same_line_or_wrap(button_w("English"));
    if (ImGui::Button(ui.settings.lang == "zh" ? "English" : "\xE4\xB8\xAD\xE6\x96\x87"))
        set_ui_language(ui, ui.settings.lang == "zh" ? "en" : "zh");
    // The compact toolbar's way to the rest (model, backend, cache, theme, text size, keys,
    // export, what runs where), and back.
    const char* more = ui.toolbar_more ? tr("Less") : tr("More");
    if (compact || ui.toolbar_more) {
        same_line_or_wrap(button_w(more));
        if (ImGui::Button(more)) ui.toolbar_more = !ui.toolbar_more;
    }
    if (compact) return;
    same_line_or_wrap(button_w(tr("Export")));
    ImGui::BeginDisabled(s.steps() == 0 || s.busy);
    if (ImGui::Button(tr("Export"))) ImGui::OpenPopup("##export");
    ImGui::EndDisabled();
    if (ImGui::BeginPopup("##export")) {
        const std::pair<const char*, ExportWhat> items[] = {
            {tr("attention of the head shown (CSV)"), ExportWhat::Attention},
            {tr("every step's numbers (CSV)"), ExportWhat::Steps},
            {tr("the whole run (trace JSON, to replay)"), ExportWhat::TraceJson},
            {tr("trace events (Perfetto, chrome://tracing)"), ExportWhat::TraceEvents},
            {tr("all four (Ctrl+E)"), ExportWhat::All}};
        for (const auto& [label, what] : items)
            if (ImGui::Selectable(label)) export_shown(f, what);
        ImGui::EndPopup();
    }

    if (s.busy) {
        ImGui::SameLine(0, fh);
        const double t = EngineWorker::now() - s.busy_since;
        char overlay[160];
        const std::string what = request_words(s.busy_request);
        if (s.busy_total > 1)
            std::snprintf(overlay, sizeof overlay, "%s: %d/%d, %.1f s", what.c_str(), s.busy_done,
                          s.busy_total, t);
        else
            std::snprintf(overlay, sizeof overlay, "%s... %.1f s", what.c_str(), t);
        // A known fraction when a run has several steps, else a bar that keeps moving.
        const float frac =
            s.busy_total > 1 ? float(s.busy_done) / s.busy_total : float(std::fmod(t, 1.0));
        ImGui::ProgressBar(frac, ImVec2(-1, 0), overlay);
    }
}

void draw_toolbar_status(FrameContext& f, bool compact) {
    const EngineSnapshot& s = f.snap;
    // The messages of the moment (an error, a notice, a font that is missing) in the status
    // line's place while they last: under the toolbar's controls, over no panel. The line stays
    // where it says what is shown (a recorded run's provenance, a warning about the model), in
    // the compact toolbar too, the messages under it.
    const auto lines = message_lines(f);
    const bool essential = s.replay || !s.model_note.empty();
    if (essential || (lines.empty() && !compact)) draw_status_line(f);
    for (const MessageLine& l : lines) {
        ImGui::PushStyleColor(ImGuiCol_Text, l.colour);
        ImGui::TextWrapped("%s", l.text.c_str());
        ImGui::PopStyleColor();
    }
}

void draw_status_line(FrameContext& f) {
    const EngineSnapshot& s = f.snap;

    // Row 3: what runs, on which backend and why that one (e.g. the CUDA error behind a
    // fallback); then anything that went wrong.
    std::string line;
    if (const Model* m = f.model()) {
        const ModelConfig& c = m->config();
        char b[160];
        // GPT-2 is named: its block differs (LayerNorm, GELU, learned positions, no RoPE).
        std::snprintf(b, sizeof b, tr("%s (%slayers: %d, heads: %d, K/V heads: %d)"),
                      m->name().c_str(), c.gpt2() ? "gpt2, " : "", c.n_layers, c.n_heads,
                      c.n_kv_heads);
        line = b;
    } else {
        line = s.busy ? tr("opening a model...") : tr("no model open");
    }
    // What the steps report they ran on; a model may bypass the backend (the toy runs on the
    // host in core), and then the backend's note does not apply.
    const StepRecord* last =
        !s.sessions.empty() && !s.sessions[0].trace.empty() ? &s.sessions[0].trace.back() : nullptr;
    const std::string ran = last ? last->backend : s.backend_name;
    const std::string device = last ? last->device : s.backend_device;
    line += std::string(" ") + tr("runs on") + " " + (ran.empty() ? s.backend_asked : ran);
    // In Chinese the device and the note in Chinese words and punctuation ("（CPU（1 个线程））").
    const bool zh = f.ui.lang == Lang::Zh;
    if (!device.empty() && device != ran)
        line += zh ? "（" + engine_message(device, ReportLang::Zh) + "）" : " (" + device + ")";
    if (!s.backend_note.empty() && ran == s.backend_name)
        line += (zh ? "。" : ". ") + engine_message(s.backend_note, report_lang(f.ui.lang));
    else if (!s.backend_note.empty())
        line +=
            std::string("; ") + tr("the backend chosen is not used") + " (" + s.backend_name + ")";
    if (s.replay) {
        // Where and on what the run shown was recorded, instead of where it runs.
        const RecordedOn& r = s.replay->recorded;
        const std::string model = f.model() ? f.model()->name() : "";
        const std::string where = r.device.empty() ? r.backend : r.device + ", " + r.backend;
        char b[1024];
        if (r.date.empty())  // version 1 traces recorded no date, program or host
            std::snprintf(b, sizeof b, tr("recorded run of %s on %s (an older trace: no date)"),
                          model.c_str(), where.c_str());
        else
            std::snprintf(b, sizeof b, tr("recorded run of %s on %s, %s; %s by %s %s"),
                          model.c_str(), where.c_str(), r.host.c_str(), r.date.c_str(),
                          r.program.c_str(), r.version.c_str());
        line = b;
    }
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    ImGui::TextWrapped("%s", line.c_str());
    ImGui::PopStyleColor();
    if (!s.model_note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.warning_text);
        ImGui::TextWrapped("%s", engine_message(s.model_note, report_lang(f.ui.lang)).c_str());
        ImGui::PopStyleColor();
    }
}

}  // namespace kvs::gui
