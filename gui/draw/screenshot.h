#pragma once
// The window as an image: the back buffer after ImGui has drawn, before the swap.
#include <string>

#include "gui/state/image_format.h"

namespace kvs::gui {

// Reads the current framebuffer (w x h) and writes it to `path` as its name says (PNG, or JPEG
// at quality 90); throws kvs::Error on failure or for a name that is neither.
void save_framebuffer(const std::string& path, int w, int h);

}  // namespace kvs::gui
