#pragma once
// Opening what the window shows: a model by name, a file, a recorded run. Each stops play and
// follows the newest step; what fails shows why in the window and changes nothing.
#include <string>

#include "gui/draw/frame_context.h"

namespace kvs::gui {

// The model menu's choice ("toy", "default", "stories260K"): the toy gets the tutorial's sentence
// as its prompt, and leaving it the real models' default prompt returns.
void open_model_by_name(FrameContext& f, const std::string& spec);
// Toolbar's Open file (and --open, a file dropped on the window or the page): a file that does
// not open shows why and changes nothing. A trace JSON (by its first bytes) is replayed.
void open_model_file(UiState& ui, EngineWorker& worker, const std::string& path);
// A recorded run (trace JSON) shown in place of the model: --replay, a dropped trace, the model
// menu's recorded runs. Not remembered in the settings: the next start opens the model.
void open_replay_file(UiState& ui, EngineWorker& worker, const std::string& path);

}  // namespace kvs::gui
