// kvscope as a web page: the window's program (gui/app/window_main.h) with the browser calling the
// frames (web_loop.h) and screenshots offered as downloads (web_files.h).
#include <string>
#include <utility>

#include "gui/app/platform.h"
#include "gui/app/window_main.h"
#include "web/web_files.h"
#include "web/web_loop.h"

namespace {
using namespace kvs::gui;

class Page final : public Platform {
  public:
    void run_frames(GlWindow& window, App& app, EngineWorker& worker, UiState& ui,
                    const std::function<bool()>&, std::function<void()> save_settings) override {
        run_web_loop(window, app, worker, ui, std::move(save_settings));  // never returns
    }
    // The page's file system is in memory: the browser saves the file.
    void screenshot_saved(const std::string& path) override { kvs::web::offer_download(path); }
};

}  // namespace

int main(int argc, char** argv) {
    // Static: the App calls it from frames that run after main's stack is unwound.
    static Page page;
    return run_window(argc, argv, page);
}
