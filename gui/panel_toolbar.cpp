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
#include "gui/engine_words.h"
#include "gui/panels.h"
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

void open_spec(FrameContext& f, const std::string& spec) {
    f.ui.settings.model = spec;
    const bool toy = spec == "toy";
    const bool from_toy = f.snap.model && f.snap.model->is_toy();
    // The toy reads only its own words; leaving it, the real models' default prompt returns.
    std::string prompt;
    if (toy)
        prompt = kToyPrompt;
    else if (from_toy)
        prompt = Settings().prompt;
    if (!prompt.empty()) {
        f.ui.prompt = prompt;
        f.ui.settings.prompt = prompt;
        f.ui.prompt_dirty = false;
    }
    f.ui.playing = false;
    f.ui.view_step = -1;
    f.worker.open_model(spec, {}, {}, prompt);
}

}  // namespace

void open_replay_file(UiState& ui, EngineWorker& worker, const std::string& path) {
    ui.playing = false;
    ui.view_step = -1;
    worker.open_replay(path);
}

void open_model_file(UiState& ui, EngineWorker& worker, const std::string& path) {
    ui.model_path = path;
    if (looks_like_trace(path)) return open_replay_file(ui, worker, path);
    ui.settings.model = "file";
    ui.settings.model_path = path;
    ui.playing = false;
    ui.view_step = -1;
    // The prompt stays: a file that does not open leaves the model and its session as they were.
    worker.open_model(path, {}, {}, {});
}

void export_shown(FrameContext& f, ExportWhat what) {
    if (f.snap.steps() == 0 || f.step < 0) return;
    char stamp[64];
    const std::time_t t = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "kvscope-%Y%m%d-%H%M%S", std::localtime(&t));
    const std::string base = stamp;
    const int layer = f.ui.settings.layer, head = f.ui.settings.head;
    std::vector<ExportFile> files;
    auto add = [&](ExportWhat w, ExportFile::Kind k, const std::string& suffix) {
        if (what != w && what != ExportWhat::All) return;
        ExportFile e{k, base + suffix};
        e.step = f.step;
        e.layer = layer;
        e.head = head;
        files.push_back(e);
    };
    char att[96];
    std::snprintf(att, sizeof att, "-attention-L%d-H%d-step%d.csv", layer, head, f.step);
    add(ExportWhat::Attention, ExportFile::Kind::AttentionCsv, att);
    add(ExportWhat::Steps, ExportFile::Kind::StepsCsv, "-steps.csv");
    add(ExportWhat::TraceJson, ExportFile::Kind::TraceJson, ".trace.json");
    add(ExportWhat::TraceEvents, ExportFile::Kind::TraceEvents, ".events.json");
    f.worker.export_run(std::move(files));
}

void request_step(FrameContext& f) {
    if (f.snap.busy) return;
    if (f.snap.finished()) {
        char b[160];
        std::snprintf(b, sizeof b, tr("generation has finished (%s): press R to reset"),
                      finish_reason_text(f.snap.sessions[0].finish_reason));
        f.ui.notice = b;
        f.ui.notice_until = ImGui::GetTime() + 3;
        f.ui.playing = false;
        return;
    }
    f.ui.view_step = -1;
    if (f.snap.steps() == 0)
        f.worker.prefill();  // the first step is always the prefill
    else
        f.worker.decode(1);
}

void request_prefill(FrameContext& f) {
    if (f.snap.busy) return;
    f.ui.view_step = -1;
    f.worker.prefill();
}

void request_reset(FrameContext& f) {
    f.worker.cancel();
    f.ui.playing = false;
    f.ui.view_step = -1;
    f.worker.reset();
}

void cycle_cache(FrameContext& f) {
    // C cycles the cache's own views; the bidirectional view has its key (M) and goes back on.
    const CacheView next = f.snap.cache == CacheView::On    ? CacheView::Off
                           : f.snap.cache == CacheView::Off ? CacheView::Compare
                                                            : CacheView::On;
    f.ui.settings.cache = next;
    f.worker.set_cache(next);
}

void toggle_bidirectional(FrameContext& f) {
    const CacheView next =
        f.snap.cache == CacheView::Bidirectional ? CacheView::On : CacheView::Bidirectional;
    f.ui.settings.cache = next;
    f.worker.set_cache(next);
}

void apply_prompt(FrameContext& f) {
    f.ui.settings.prompt = f.ui.prompt;
    f.ui.prompt_dirty = false;
    f.ui.playing = false;
    f.ui.view_step = -1;
    f.worker.set_prompt(f.ui.prompt);
}

struct MessageLine {
    ImU32 colour;
    std::string text;
};
static std::vector<MessageLine> message_lines(FrameContext& f);
static void draw_toolbar_setup(FrameContext& f);
static void draw_toolbar_steps(FrameContext& f, bool compact);
static void draw_toolbar_status(FrameContext& f, bool compact);
static void draw_status_line(FrameContext& f);

static float button_w(const char* label) {
    return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
}

void draw_toolbar(FrameContext& f) {
    const bool compact = f.toolbar_compact;
    if (!compact) draw_toolbar_setup(f);
    draw_toolbar_steps(f, compact);
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
                open_spec(f, c.spec);
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

void draw_toolbar_steps(FrameContext& f, bool compact) {
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
            open_lesson(ui, f.worker, std::max(1, ui.lesson.number), ui.lesson.step);
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

std::vector<MessageLine> message_lines(FrameContext& f) {
    const double now = ImGui::GetTime();
    using Line = MessageLine;
    std::vector<Line> lines;
    if (!f.snap.error.empty() && now < f.ui.error_until)
        lines.push_back(
            {f.theme.error_text, f.snap.error_task == EngineTask::None
                                     ? engine_message(f.snap.error, report_lang(f.ui.lang))
                                     : std::string(tr(failure_words(f.snap.error_task))) +
                                           (f.ui.lang == Lang::Zh ? "：" : ": ") +
                                           engine_message(f.snap.error, report_lang(f.ui.lang))});
    if (!f.ui.notice.empty() && now < f.ui.notice_until)
        lines.push_back({f.theme.ok_text, f.ui.notice});
    if (!f.ui.font_notice.empty() && now < f.ui.font_notice_until)
        lines.push_back(
            {f.theme.warning_text, engine_message(f.ui.font_notice, report_lang(f.ui.lang))});
    for (Line& l : lines) l.text = FrameContext::drawable(l.text);
    return lines;
}

void draw_messages(FrameContext& f) {
    // Errors, notices and missing fonts show for a few seconds in the toolbar, in its status
    // line's place. Without a toolbar (a panel alone, presenter mode) they float at the bottom
    // of the window, over the end of a panel's contents, never over a title or a tab.
    const auto lines = message_lines(f);
    if (f.layout)
        for (const MessageLine& l : lines) f.layout->messages.push_back(l.text);
    if (lines.empty() || f.toolbar_bottom > 0) return;
    using Line = MessageLine;
    const ImVec2 vp = ImGui::GetMainViewport()->Size;
    ImGui::SetNextWindowPos(ImVec2(vp.x * 0.5f, vp.y - 4), ImGuiCond_Always, ImVec2(0.5f, 1.0f));
    ImGui::SetNextWindowBgAlpha(0.97f);
    ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(vp.x * 0.8f, vp.y * 0.5f));
    ImGui::Begin("##messages", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                     ImGuiWindowFlags_NoInputs | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav);
    for (const Line& l : lines) {
        ImGui::PushStyleColor(ImGuiCol_Text, l.colour);
        ImGui::PushTextWrapPos(vp.x * 0.78f);
        ImGui::TextUnformatted(l.text.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
    }
    ImGui::End();
}

}  // namespace kvs::gui
