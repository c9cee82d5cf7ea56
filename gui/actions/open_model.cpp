// Opening what the window shows: a model by name (the toolbar's menu), a file (Open file..., a
// file dropped on the window or the page, --open) or a recorded run.
#include "gui/actions/open_model.h"

#include "core/session/trace_reader.h"
#include "gui/state/options.h"

namespace kvs::gui {

void open_model_by_name(FrameContext& f, const std::string& spec) {
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

}  // namespace kvs::gui
