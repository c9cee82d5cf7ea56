#include "web/web_loop.h"

#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/util/json_writer.h"
#include "gui/actions/open_model.h"
#include "gui/app/app.h"
#include "gui/app/gl_window.h"
#include "gui/engine/engine_worker.h"
#include "gui/state/settings.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"
#include "gui/views/layout_record.h"
#include "web/web_files.h"

namespace kvs::gui {
namespace {

// The engine gets this much of each frame: at 60 frames a second a frame has 16.7 ms, and the
// drawing needs the rest. One request (one step) always runs, however long it takes.
constexpr double kEngineSlice = 0.008;
// How often the settings are saved (and copied to localStorage when they changed).
constexpr double kSaveEveryMs = 2000;

struct Loop {
    GlWindow* window = nullptr;
    App* app = nullptr;
    EngineWorker* worker = nullptr;
    UiState* ui = nullptr;
    double first_frame_ms = -1;      // since the page started loading (performance.now())
    std::vector<double> frame_ms;    // whole frames: engine slice, panels, drawing; newest last
    std::vector<double> engine_ms;   // of which the engine's slice
    std::uint64_t error_serial = 0;  // the last engine error written to the console
    std::function<void()> save_settings;
    double saved_at_ms = 0;
    bool want_layout = false;  // the next frame records where it drew (kvscope_web_layout)
    const char* bar_label =
        nullptr;  // the open button's words as last set, in the window's language
};
Loop g_loop;

// The canvas follows the browser window (the page has no window manager to resize it), less the
// page's bar under it (web/index.html: the button that opens files, never over a panel).
void follow_page_size() {
    const int w = EM_ASM_INT(
        { return window.kvscopeCanvasSize ? window.kvscopeCanvasSize()[0] : window.innerWidth; });
    const int h = EM_ASM_INT(
        { return window.kvscopeCanvasSize ? window.kvscopeCanvasSize()[1] : window.innerHeight; });
    int cw = 0, ch = 0;
    glfwGetWindowSize(g_loop.window->handle(), &cw, &ch);
    if (w > 0 && h > 0 && (w != cw || h != ch)) glfwSetWindowSize(g_loop.window->handle(), w, h);
}

// The engine's errors go to the browser's console too (the window shows the latest only).
void log_engine_error() {
    auto lock = g_loop.worker->lock();
    const EngineSnapshot& s = g_loop.worker->snapshot();
    if (s.error_serial == g_loop.error_serial) return;
    g_loop.error_serial = s.error_serial;
    const char* context = failure_words(s.error_task);
    std::fprintf(stderr, "kvscope: error: %s%s%s\n", context, *context ? ": " : "",
                 s.error.c_str());
}

// The page's open button (web/index.html, in the bar under the canvas) speaks the window's
// language: its words and its hover text, set again when the language changes.
void label_open_button() {
    const char* label = tr("Open a checkpoint or trace…");
    if (label == g_loop.bar_label) return;
    g_loop.bar_label = label;
    const char* hint =
        tr("a llama2.c checkpoint and its tokenizer (e.g. stories260K.bin and tok512.bin), a GGUF "
           "file, or a recorded run (a trace .json from kvscope-cli generate --trace-json or the "
           "window's Export); or drop them on the page");
    EM_ASM(
        {
            const b = document.getElementById('open-words');
            if (b) b.textContent = UTF8ToString($0);
            const o = document.getElementById('open');
            if (o) o.title = UTF8ToString($1);
        },
        label, hint);
}

void frame() {
    const double t0 = emscripten_get_now();
    follow_page_size();
    glfwPollEvents();
    g_loop.worker->run_pending(kEngineSlice);
    log_engine_error();
    const double t1 = emscripten_get_now();
    if (g_loop.want_layout) {
        // The same record as the desktop's --layout-json, of a frame the page really showed: a
        // test screenshots the page after it and checks the pixels where this says it drew.
        g_loop.want_layout = false;
        LayoutRecord layout;
        g_loop.app->frame({}, &layout);
        std::printf("kvscope-web-layout: %s\n", layout.to_json(-1).c_str());
        std::fflush(stdout);
    } else {
        g_loop.app->frame();
    }
    label_open_button();
    const double t2 = emscripten_get_now();
    if (g_loop.first_frame_ms < 0) {
        g_loop.first_frame_ms = t2;
        std::printf("kvscope-web: first frame %.0f ms after the page started loading\n", t2);
    }
    // The last 600 frames (10 s at 60 frames a second).
    if (g_loop.frame_ms.size() == 600) {
        g_loop.frame_ms.erase(g_loop.frame_ms.begin());
        g_loop.engine_ms.erase(g_loop.engine_ms.begin());
    }
    g_loop.frame_ms.push_back(t2 - t0);
    g_loop.engine_ms.push_back(t1 - t0);
    if (t2 - g_loop.saved_at_ms > kSaveEveryMs) {
        g_loop.saved_at_ms = t2;
        g_loop.save_settings();
        const std::string dir = settings_dir();
        if (!dir.empty()) web::persist_settings(dir);
    }
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

void run_web_loop(GlWindow& window, App& app, EngineWorker& worker, UiState& ui,
                  std::function<void()> save_settings) {
    g_loop.save_settings = std::move(save_settings);
    g_loop.window = &window;
    g_loop.app = &app;
    g_loop.worker = &worker;
    g_loop.ui = &ui;
    // 0: the browser's animation frames; 1: unwind the caller (never returns).
    emscripten_set_main_loop(frame, 0, 1);
    __builtin_unreachable();
}

}  // namespace kvs::gui

using kvs::gui::g_loop;

// 1 once the engine has run every request so far (and a frame was drawn).
extern "C" EMSCRIPTEN_KEEPALIVE int kvscope_web_idle() {
    return g_loop.worker && g_loop.first_frame_ms >= 0 && g_loop.worker->idle() ? 1 : 0;
}

// The checkpoint the user picked or dropped (index.html wrote it, and any tokenizer beside it, into
// a folder of its own under /uploads): opened as the toolbar's file field opens one.
extern "C" EMSCRIPTEN_KEEPALIVE void kvscope_web_open_model(const char* path) {
    if (!g_loop.ui || !path) return;
    kvs::gui::open_model_file(*g_loop.ui, *g_loop.worker, path);
}

// The next frame prints "kvscope-web-layout: {JSON}" (gui/views/layout_record.h: heatmaps, KV
// grids, colours, texts) on the console.
extern "C" EMSCRIPTEN_KEEPALIVE void kvscope_web_layout() {
    g_loop.want_layout = true;
}

// One line on the console: "kvscope-web-report: {JSON}" with each session's tokens, text, and
// per step the chosen token, KV length and top logits (the numbers kvscope-cli's --trace-json
// has for the same run), and the frame times so far. The web tests compare it with the CLI.
extern "C" EMSCRIPTEN_KEEPALIVE void kvscope_web_report() {
    if (!g_loop.worker) return;
    std::ostringstream os;
    kvs::JsonWriter j(os);
    j.begin_object();
    {
        auto lock = g_loop.worker->lock();
        const kvs::gui::EngineSnapshot& s = g_loop.worker->snapshot();
        j.field("model", s.model_spec).field("backend", s.backend_name);
        j.field("device", s.backend_device).field("error", s.error);
        j.field("lang", kvs::gui::lang_code(g_loop.ui->lang)).field("prompt", s.prompt);
        j.key("sessions").begin_array();
        for (const auto& v : s.sessions) {
            j.begin_object();
            j.field("mode", v.mode == kvs::CacheMode::Cached ? "cached" : "uncached");
            j.key("prompt_tokens").ints(v.prompt_tokens);
            j.key("steps").begin_array();
            for (const kvs::StepRecord& r : v.trace.steps()) {
                j.begin_object();
                j.field("index", r.index).field("token_out", r.token_out);
                j.field("kv_len", r.kv.len);
                j.key("top").begin_array();
                for (const kvs::TopToken& t : r.top)
                    j.begin_object().field("id", t.id).field("logit", double(t.logit)).end_object();
                j.end_array();
                j.end_object();
            }
            j.end_array();
            j.end_object();
        }
        j.end_array();
    }
    j.field("first_frame_ms", g_loop.first_frame_ms);
    j.field("frames", g_loop.frame_ms.size());
    j.field("frame_ms_median", kvs::gui::median(g_loop.frame_ms));
    j.field("engine_ms_median", kvs::gui::median(g_loop.engine_ms));
    j.field("build_ms_last", g_loop.app ? g_loop.app->last_build_ms() : 0.0);
    int w = 0, h = 0;
    if (g_loop.window) g_loop.window->framebuffer_size(w, h);
    j.field("width", w).field("height", h);
    j.end_object();
    std::printf("kvscope-web-report: %s\n", os.str().c_str());
    std::fflush(stdout);
}
