#pragma once
// The window as an image: the back buffer after ImGui has drawn, before the swap.
#include <string>

#include "gui/state/image_format.h"

namespace kvs::gui {

// Reads the current framebuffer (w x h) and writes it to `path` as its name says (PNG, or JPEG
// at quality 90); throws kvs::Error on failure or for a name that is neither.
void save_framebuffer(const std::string& path, int w, int h);

// Throws what save_framebuffer would for `path` before anything is drawn: a name that is neither
// format, and every refusal of core/util/output_file.h (a folder, a read-only file, a file that
// is not an earlier screenshot of kvscope's).
void check_screenshot_path(const std::string& path);

}  // namespace kvs::gui
