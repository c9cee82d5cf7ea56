#pragma once
// The window's program, the same on the desktop and in the page: options, settings, the model,
// the headless runs (--screenshot, --layout-json, --frame-stats, --soak), then the interactive
// frames through `platform` (gui/app/platform.h).
#include "gui/app/platform.h"

namespace kvs::gui {

// What main() returns: 0, 2 after a user error (bad options, no display, old OpenGL, a model that
// will not open; one line on stderr), 1 after an internal error.
int run_window(int argc, char** argv, Platform& platform);

}  // namespace kvs::gui
