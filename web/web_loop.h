#pragma once
// The page's main loop (Emscripten only): the browser calls one frame per animation frame; each
// frame first runs the engine's queued requests for a slice of time (the page has no worker
// thread, see EngineWorker::run_pending), then draws. Also what the page's script and the web
// tests read: kvscope_web_idle() and kvscope_web_report() (web/index.html).
#include <functional>

namespace kvs::gui {

class App;
class EngineWorker;
class GlWindow;
struct UiState;

// Hands the loop to the browser; never returns (Emscripten unwinds the caller's stack, so the
// arguments must outlive it: gui/app/window_main.cpp keeps them static in the page).
// `save_settings` writes the settings file (the desktop does so once, at the end; a page has no
// end, so every few seconds), which then goes to the browser's localStorage (web_files.h).
[[noreturn]] void run_web_loop(GlWindow& window, App& app, EngineWorker& worker, UiState& ui,
                               std::function<void()> save_settings);

}  // namespace kvs::gui
