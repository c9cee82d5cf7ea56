#pragma once
// The window as a PNG: the back buffer after ImGui has drawn, before the swap.
#include <string>

namespace kvs::gui {

// Reads the current framebuffer (w x h) and writes it to `path`; throws kvs::Error on failure.
void save_framebuffer_png(const std::string& path, int w, int h);

}  // namespace kvs::gui
