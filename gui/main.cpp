// kvscope on the desktop: the window's program (gui/app/window_main.h) with a frame loop that
// sleeps until something happens, and dropped files opened as models.
#include <GLFW/glfw3.h>

#include "gui/actions/open_model.h"
#include "gui/app/app.h"
#include "gui/app/gl_window.h"
#include "gui/app/platform.h"
#include "gui/app/window_main.h"
#include "gui/engine/engine_worker.h"
#include "gui/state/dropped_paths.h"

namespace {
using namespace kvs::gui;

class Desktop final : public Platform {
  public:
    void run_frames(GlWindow& window, App& app, EngineWorker& worker, UiState& ui,
                    const std::function<bool()>& quit, std::function<void()>) override {
        while (!window.should_close() && !quit()) {
            // Sleep until something happens unless a step is running or playing.
            if (!ui.playing && worker.idle())
                glfwWaitEventsTimeout(0.5);
            else
                glfwPollEvents();
            if (const auto dropped = window.take_dropped(); !dropped.empty())
                open_model_file(ui, worker, model_among_dropped(dropped));
            app.frame();
        }
    }
    // The file stays where it was written; the notice names it.
    void screenshot_saved(const std::string&) override {}
};

}  // namespace

int main(int argc, char** argv) {
    Desktop desktop;
    return run_window(argc, argv, desktop);
}
