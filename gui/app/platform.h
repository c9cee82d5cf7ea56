#pragma once
// What the desktop window and the web page do differently around the same App (gui/window_main.h
// starts both): who calls the frames once the window is up, and where a screenshot the user asked
// for goes. gui/main.cpp implements it for the desktop, web/web_main.cpp for the page, so gui/
// knows nothing of the page.
#include <functional>
#include <string>

namespace kvs::gui {

class App;
class EngineWorker;
class GlWindow;
struct UiState;

class Platform {
  public:
    virtual ~Platform() = default;
    // Calls app.frame() until the window closes or quit() is true (the desktop), or hands the
    // frames to the browser and never returns (the page: Emscripten unwinds the caller's stack,
    // so what the frames use outlives it). `save_settings` writes the settings file: the caller
    // does so once more when this returns; a page has no end and saves every few seconds.
    virtual void run_frames(GlWindow& window, App& app, EngineWorker& worker, UiState& ui,
                            const std::function<bool()>& quit,
                            std::function<void()> save_settings) = 0;
    // A file the user asked for is saved at `path`: a PNG (the toolbar's button, F12), or an
    // export (the Export menu, Ctrl+E: CSV, trace JSON, trace events).
    virtual void screenshot_saved(const std::string& path) = 0;
};

}  // namespace kvs::gui
