// kvscope: the window. Interactive by default; --screenshot and --frame-stats run the same
// frames without anyone at the keyboard. User errors (bad options, no display, old OpenGL, a
// model that will not open) print one line and exit with 2.
#include "gui/app/window_main.h"

#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <new>
#include <vector>

#include "core/serving/prompt_file.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/numbering.h"
#include "core/util/output_file.h"
#include "core/util/utf8.h"
#include "core/util/version.h"
#include "gui/actions/open_model.h"
#include "gui/app/app.h"
#include "gui/app/gl_window.h"
#include "gui/app/quit_signal.h"
#include "gui/app/soak.h"
#include "gui/engine/engine_worker.h"
#include "gui/panels/inside_attention.h"
#include "gui/panels/lesson.h"
#include "gui/state/options.h"
#include "gui/state/settings.h"
#ifdef __EMSCRIPTEN__
// The page's frames run after run() has returned (Emscripten unwinds its stack when the browser
// takes over the loop), so what they use is static there.
#define KVS_FRAME_LIFETIME static
#else
#define KVS_FRAME_LIFETIME
#endif

namespace {
using namespace kvs;
using namespace kvs::gui;

// Waits for the engine; a user error from the requests so far is fatal in headless runs.
void settle(EngineWorker& worker) {
    worker.wait_idle();
    auto lock = worker.lock();
    if (worker.snapshot().error_serial != 0) throw Error(worker.snapshot().error);
}

// --answer: the question of the lesson step shown, answered as its keys would: a choice 1-4, a
// number, or skip.
void answer_headless(UiState& ui, LessonUi& L, EngineWorker& worker, const std::string& a) {
    const auto lesson = L.catalog.lesson(L.number, ui.lang);
    if (!lesson_question_waits(ui, L) || !lesson)
        throw Error("--answer: lesson " + std::to_string(L.number) + " step " +
                    std::to_string(L.step + 1) + " asks no question");
    const AskSpec& ask = lesson->steps[L.step].ask()->ask;
    LearnerAnswer l;
    if (a != "skip" && !learner_answer_from(ask, a, l))
        throw Error("--answer '" + a + "': " + ask_answer_hint(ask, ReportLang::En) + ", or skip");
    answer_lesson_question(ui, L, worker, l);
}

// User + system time of every thread of this process so far, in ms.
double process_cpu_ms() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

int frame_stats(App& app, EngineWorker& worker, const GlWindow& win, int frames) {
    for (int i = 0; i < 5; ++i) app.frame();  // fonts, layout and textures settle first
    std::vector<double> ms, build;
    ms.reserve(frames);
    const double cpu0 = process_cpu_ms();
    for (int i = 0; i < frames; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        glfwPollEvents();
        app.frame();
        glFinish();  // count the rendering, not just the queuing of it
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        build.push_back(app.last_build_ms());
    }
    const double cpu_per_frame = (process_cpu_ms() - cpu0) / frames;
    std::sort(build.begin(), build.end());
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    int tokens = 0;
    {
        auto lock = worker.lock();
        const auto& s = worker.snapshot();
        if (!s.sessions.empty() && !s.sessions[0].trace.empty())
            tokens = s.sessions[0].trace.back().kv.len;
    }
    int w = 0, h = 0;
    win.framebuffer_size(w, h);
    std::printf("frame time over %d frames: min %.2f ms, median %.2f ms, max %.2f ms\n", frames,
                sorted.front(), sorted[sorted.size() / 2], sorted.back());
    std::printf(
        "of which building the frame on the CPU (panels, texture uploads): median %.2f ms "
        "(min %.2f ms)\n",
        build[build.size() / 2], build.front());
    std::printf("CPU time per frame, all threads (llvmpipe renders on the CPU): %.2f ms\n",
                cpu_per_frame);
    std::printf("(%d tokens in the cache, %dx%d, OpenGL %s, %s)\n", tokens, w, h,
                win.gl_version().c_str(), win.gl_renderer().c_str());
    return 0;
}

// FILE.json -> FILE-N.json (FILE-N.json when FILE has no .json).
std::string view_file(const std::string& base, std::size_t n) {
    const bool json = base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0;
    return (json ? base.substr(0, base.size() - 5) : base) + "-" + std::to_string(n) + ".json";
}

// One --views entry, as the keys would set it (read_view has read every value).
void apply_view(UiState& ui, ExplainUi& explain, EngineWorker& worker, const std::string& view) {
    using Key = ViewSetting::Key;
    for (const ViewSetting& s : read_view(view)) {
        switch (s.key) {
            case Key::maximise:
                ui.maximised = s.panel;
                break;
            case Key::presenter:
                ui.presenter = s.on;
                break;
            case Key::lesson_off:
                close_lesson(ui);  // key L
                break;
            case Key::stage:
                explain.stage = s.stage;
                explain.stage_playing = false;
                break;
            case Key::explain:
                if (s.on)
                    open_inside_attention(ui, explain, 0, s.layer, s.head, s.row);
                else
                    explain.open = false;
                break;
            case Key::temperature:
                ui.settings.temperature = s.number;
                break;
            case Key::top_k:
                ui.settings.top_k = static_cast<int>(s.number);
                break;
            case Key::top_p:
                ui.settings.top_p = s.number;
                break;
            case Key::mask: {
                // The bidirectional view (its sessions replay the steps so far), or back.
                const CacheView c = s.on ? CacheView::Bidirectional : CacheView::On;
                ui.settings.cache = c;
                worker.set_cache(c);
                break;
            }
        }
    }
}

// What the command line says over the settings file (kept, like a toolbar change, unless the
// settings are not saved).
void settings_from_options(const AppOptions& o, Settings& st) {
    if (o.lang) st.lang = *o.lang;
    if (o.theme) st.theme = *o.theme;
    if (o.font_scale) st.font_scale = *o.font_scale;
    if (o.weight_scale) st.weight_scale = *o.weight_scale;
    // cuda-emulated, the CUDA kernels run on the CPU, is for tests and lessons: not remembered.
    if (!o.backend.empty() && o.backend != "cuda-emulated") st.backend = o.backend;
    if (o.cache) st.cache = *o.cache;
    if (o.prompt) st.prompt = *o.prompt;
    if (o.layer >= 0) st.layer = o.layer;
    if (o.head >= 0) st.head = o.head;
    if (o.temperature) st.temperature = *o.temperature;
    if (o.top_k) st.top_k = *o.top_k;
    if (o.top_p) st.top_p = *o.top_p;
    if (o.seed) st.seed = *o.seed;
}

// A prompts file that cannot be read or holds none: one line and exit 2, before a window.
void check_serve_prompts(const AppOptions& o) {
    if (o.serve_prompts.empty()) return;
    try {
        read_prompt_file(o.serve_prompts);
    } catch (const Error& e) {
        std::string why = "--serve-prompts ";
        why += e.what();
        throw Error(why);
    }
}

// The model to open: the command line's, else the remembered one, else the default.
std::string model_to_open(const AppOptions& o, Settings& st) {
    const std::string saved_model = st.model;
    std::string spec = st.model == "file" ? st.model_path : st.model;
    if (!o.model.empty()) {
        spec = o.model;
        st.model = o.model;
    }
    if (spec.empty()) spec = "default";
    // The toy reads only its own words: unless a prompt was given (or remembered from the toy
    // itself), it gets the tutorial's sentence.
    if (spec == "toy" && !o.prompt && saved_model != "toy") st.prompt = kToyPrompt;
    return spec;
}

// The worker's first requests: the backend, cache, sampler and the model (or recorded run), then
// the Serving view's run asked on the command line.
void start_engine(const AppOptions& o, UiState& ui, EngineWorker& worker, const std::string& spec,
                  const std::string& backend, bool op_strip, const ServeSetup& serve) {
    const Settings& st = ui.settings;
    // A model asked for by name must open; the remembered or default one may fall back (the
    // default model may not be built yet), with the reason shown in the window.
    std::vector<std::string> fallbacks;
    if (o.model.empty())
        for (const char* fb : {"default", "stories260K", "toy"})
            if (spec != fb) fallbacks.push_back(fb);
    SamplerConfig sc;
    sc.temperature = st.temperature;
    sc.top_k = st.top_k;
    sc.top_p = st.top_p;
    sc.seed = st.seed;
    if (o.trace_budget > 0) worker.set_trace_budget(o.trace_budget);
    worker.set_context(o.context);
    if (o.timing_runs > 0) worker.set_timing_runs(o.timing_runs);
    // Every op timed while the op strip is open; App::frame keeps this in step with the key
    // (--ops-fast: the steps asked for here take the fast path, and the strip shows its kernels).
    worker.set_time_each_op(op_strip && !o.ops_fast);
    worker.set_backend(backend, o.threads);
    worker.set_cache(st.cache);
    worker.set_sampler(sc);
    if (o.replay.empty())
        worker.open_model(spec, o.tokenizer, fallbacks, st.prompt);
    else
        open_replay_file(ui, worker, o.replay);
    // The Serving view's run asked on the command line, queued after the model.
    if (o.serve && o.replay.empty()) {
        worker.serve_open(serve);
        if (o.serve_steps > 0) worker.serve_step(o.serve_steps);
    }
}

// The run shown, written when the window closes (headless: after its steps). Returns why it
// could not be, or "".
std::string write_run(const AppOptions& o, EngineWorker& worker) {
    std::vector<ExportFile> files;
    if (!o.trace_json.empty()) files.push_back({ExportFile::Kind::TraceJson, o.trace_json});
    if (!o.trace_events.empty()) files.push_back({ExportFile::Kind::TraceEvents, o.trace_events});
    if (files.empty()) return {};
    const std::uint64_t before = [&] {
        auto lock = worker.lock();
        return worker.snapshot().error_serial;
    }();
    worker.export_run(std::move(files));
    worker.wait_idle();
    auto lock = worker.lock();
    return worker.snapshot().error_serial != before ? worker.snapshot().error : "";
}

// --lesson N --lesson-step S without a display: the lesson opened at that step.
void open_headless_lesson(const AppOptions& o, UiState& ui, App& app, EngineWorker& worker) {
    // As a learner gets there: the step before played (its question, if any, passed
    // over), then this one, which waits for its answer if it asks.
    if (o.lesson_step > 1) {
        open_lesson(ui, app.lesson(), worker, o.lesson, o.lesson_step - 2);
        if (lesson_question_waits(ui, app.lesson()))
            answer_lesson_question(ui, app.lesson(), worker, {});
        settle(worker);
    }
    open_lesson(ui, app.lesson(), worker, o.lesson, o.lesson_step - 1);
    settle(worker);
    // A question the step asks: answered as --answer says (by default passed over, so
    // the step runs), or left waiting with --answer wait.
    const bool pass_over = o.answer.empty() || o.answer == "skip";
    if (o.answer != "wait" && (!pass_over || lesson_question_waits(ui, app.lesson()))) {
        answer_headless(ui, app.lesson(), worker, pass_over ? "skip" : o.answer);
        settle(worker);
    }
    // A step's @serve opens the Serving view's run on the window's first frame: set
    // up (and stepped as --serve-steps asks) before the frames shown.
    app.frame();
    settle(worker);
    bool serves = false;
    {
        auto lock = worker.lock();
        serves = worker.snapshot().lesson.serve != nullptr;
    }
    if (o.serve_steps > 0 && serves) {
        worker.serve_step(o.serve_steps);
        settle(worker);
    }
}

// The headless frames: settled, then recorded (--screenshot, --layout-json, each --views).
int record_frames(const AppOptions& o, UiState& ui, App& app, EngineWorker& worker) {
    // Auto-sized windows and the toolbar's height settle over the first frames (the full
    // toolbar measured, then its compact form where it is too tall, each a frame late).
    for (int i = 0; i < 6; ++i) app.frame();
    LayoutRecord layout;
    app.frame(o.screenshot, &layout);
    if (!o.layout_json.empty()) {
        write_output_file(o.layout_json, layout.to_json() + "\n", layout_json_output());
    }
    // More views of the same engine state, each its own record (the overlap test renders
    // several views per start of the window).
    for (std::size_t i = 0; i < o.views.size(); ++i) {
        apply_view(ui, app.explain(), worker, o.views[i]);
        settle(worker);
        app.frame();  // the toolbar's height settles (a view may hide it)
        app.frame();
        app.frame({}, &layout);
        write_output_file(view_file(o.layout_json, i + 1), layout.to_json() + "\n",
                          layout_json_output());
    }
    return 0;
}

// A run without a display (docs, tests): the steps asked for, then the frames recorded.
int run_headless(const AppOptions& o, UiState& ui, App& app, EngineWorker& worker,
                 GlWindow& window) {
    settle(worker);
    {
        auto lock = worker.lock();
        const EngineSnapshot& snap = worker.snapshot();
        if (snap.error_task == EngineTask::ServeOpen || snap.error_task == EngineTask::ServeStep) {
            std::string why = "the Serving view's run: ";
            why += snap.error;
            throw Error(why);
        }
    }
    // The model and tokenizer are open (inputs of the run): an output naming one of them,
    // or a folder, fails now rather than after the frames.
    for (const std::string* out : {&o.screenshot, &o.layout_json, &o.trace_json, &o.trace_events})
        if (!out->empty()) check_output_path(*out);
    if (o.decode > 0)
        worker.decode(o.decode);
    else if (o.prefill)
        worker.prefill();
    settle(worker);
    if (o.lesson > 0) open_headless_lesson(o, ui, app, worker);
    // As a user would: what goes wrong is shown in the window, not fatal.
    if (!o.open_file.empty()) {
        open_model_file(ui, worker, o.open_file);
        worker.wait_idle();
    }
    if (o.then_prompt) {
        ui.prompt = *o.then_prompt;
        ui.settings.prompt = *o.then_prompt;
        worker.set_prompt(*o.then_prompt);
        worker.wait_idle();
    }
    // The layout record alone needs no pixels.
    app.set_draw_pixels(!o.screenshot.empty() || o.frame_stats > 0 || o.soak_steps > 0);
    if (const std::string why = write_run(o, worker); !why.empty()) throw Error(why);
    if (o.weight_types) {  // measured before the frames, so the screenshot has the table
        std::shared_ptr<const Model> model;
        {
            const auto lock = worker.lock();
            model = worker.snapshot().model;
        }
        app.measure_weight_types(model);
    }
    if (o.soak_steps > 0) return run_soak(app, worker, o.soak_steps, o.soak_report);
    if (o.frame_stats > 0) return frame_stats(app, worker, window, o.frame_stats);
    return record_frames(o, ui, app, worker);
}

int run(int argc, char** argv, Platform& platform) {
    const AppOptions o = parse_options(argc, argv);
    if (o.help) {
        std::fputs(usage().c_str(), stdout);
        return 0;
    }
    if (o.version) {
        std::printf("kvscope %s\n", kvscope_version());
        return 0;
    }
    const bool headless = o.headless();
    if (!headless) {
        // Interactive runs only (headless ones have no settings to save: the default ends them),
        // from the start, so a signal while the model or a lesson opens is not lost. The loop
        // wakes at least every 0.5 s (glfwWaitEventsTimeout) to see it (gui/app/quit_signal.h).
        install_quit_handlers();
    }
    // Headless runs (docs, tests) neither read nor write the user's settings.
    const bool persist = !o.no_settings && !headless;
    const std::string dir = persist ? settings_dir() : "";
    const std::string settings_file = dir.empty() ? "" : dir + "/settings.txt";
    KVS_FRAME_LIFETIME UiState ui;
    // A first run (no settings file yet) opens on lesson 1.
    std::error_code exists_ec;
    const bool first_run =
        !settings_file.empty() && !std::filesystem::exists(settings_file, exists_ec);
    std::vector<std::string> settings_problems;
    if (!settings_file.empty()) ui.settings = load_settings(settings_file, &settings_problems);
    for (const auto& p : settings_problems) std::fprintf(stderr, "kvscope: %s\n", p.c_str());
    if (!settings_problems.empty()) {
        ui.notice = settings_problems.front();
        ui.notice_until = 10;  // ImGui::GetTime() counts from the start: the first 10 s
    }
    Settings& st = ui.settings;
    if (first_run) {
        st.lesson = 1;
        st.lesson_step = 0;
    }
    // The command line's backend runs this session (the settings keep it only where the toolbar
    // offers it too).
    const std::string backend = o.backend.empty() ? st.backend : o.backend;
    settings_from_options(o, st);
    ui.show_weight_types = o.weight_types;
    ui.maximised = o.maximise;
    ui.show_serving = o.serve;
    check_serve_prompts(o);
    ui.presenter = o.presenter;
    const std::string spec = model_to_open(o, st);
    ui.prompt = st.prompt;
    ui.model_path = st.model_path;

    std::string ini;
    if (!dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (!ec) ini = dir + "/imgui.ini";
    }
    KVS_FRAME_LIFETIME GlWindow window(
        {o.width, o.height, !headless, ini.empty() ? nullptr : ini.c_str()});
    // A first start follows the monitor's content scale (text 2 on a display scaled by 200%):
    // the text size is then the user's to change, and is remembered.
    if (first_run && !o.font_scale)
        st.font_scale = std::clamp(std::round(window.content_scale() * 8) / 8, 1.0f, 4.0f);
    KVS_FRAME_LIFETIME EngineWorker worker;
    worker.set_wake([] { glfwPostEmptyEvent(); });
    KVS_FRAME_LIFETIME App app(window, worker, ui, platform, headless);
    ExplainUi& explain = app.explain();
    LessonUi& lesson = app.lesson();
    if (o.explain)
        open_inside_attention(ui, explain, o.explain_session, o.explain_layer, o.explain_head,
                              o.explain_q_pos);
    explain.op_strip = o.ops;
    explain.op = o.op;
    explain.stage = o.explain_stage;
    app.set_heatmap_zoom(o.zoom);
    ServeSetup& serve = app.serving().setup;
    serve.prompts_file = o.serve_prompts;
    serve.config.block_size = o.serve_block_size;
    serve.config.prefix_caching = o.serve_sharing;

    start_engine(o, ui, worker, spec, backend, explain.op_strip, serve);
    if (headless) return run_headless(o, ui, app, worker, window);
    if (o.decode > 0)
        worker.decode(o.decode);
    else if (o.prefill)
        worker.prefill();
    // A lesson plays on live sessions: a replay asked for on the command line comes first.
    if (o.lesson > 0)
        open_lesson(ui, lesson, worker, o.lesson, o.lesson_step - 1);
    else if (st.lesson > 0 && o.replay.empty())
        open_lesson(ui, lesson, worker, st.lesson, st.lesson_step);

    // Remembers the model that opened and the prompt it accepted (not ones that failed), then
    // writes the settings file: at the end on the desktop, every few seconds in the page.
    // (Pointers: in the page ui and worker are static, which a lambda cannot capture.)
    auto save_now = [u = &ui, w = &worker, settings_file] {
        Settings& keep = u->settings;
        {
            auto lock = w->lock();
            const EngineSnapshot& snap = w->snapshot();
            if (snap.model && !snap.replay) {
                keep.prompt = snap.prompt;
                const std::string& m = snap.model_spec;
                if (m == "toy" || m == "default" || m == "stories260K") {
                    keep.model = m;
                } else if (!m.empty()) {
                    keep.model = "file";
                    keep.model_path = m;
                }
            }
        }
        if (settings_file.empty()) return;
        const std::string why = save_settings(keep, settings_file);
        if (!why.empty())
            std::fprintf(stderr, "kvscope: could not save settings: %s\n",
                         escape_for_one_line(why).c_str());
    };
    platform.run_frames(
        window, app, worker, ui, [] { return quit_requested(); }, save_now);
    // Stops a running step loop or @batch sweep between forward passes, so the worker's thread
    // joins promptly and the settings below are saved even when a signal ended the loop.
    worker.cancel();
    worker.wait_idle();
    if (const std::string why = write_run(o, worker); !why.empty())
        std::fprintf(stderr, "kvscope: could not write the run: %s\n",
                     escape_for_one_line(why).c_str());
    save_now();
    return 0;
}

}  // namespace

int kvs::gui::run_window(int argc, char** argv, Platform& platform) {
    try {
        return run(argc, argv, platform);
    } catch (const kvs::Error& e) {
        std::fprintf(stderr, "kvscope: error: %s\n", kvs::escape_for_one_line(e.what()).c_str());
        return 2;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "kvscope: error: out of memory\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kvscope: internal error: %s\n", e.what());
        return 1;
    }
}
