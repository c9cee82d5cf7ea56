#pragma once
// Text that reads on a projector: DejaVu Sans at 16 px times the user's scale, with Chinese
// glyphs merged in from WenQuanYi Micro Hei when it is installed (common simplified set only:
// the full range would cost 64 MiB of atlas). Without DejaVu, ImGui's built-in font, and a notice.
#include <string>

namespace kvs::gui {

struct FontInfo {
    bool dejavu = false;
    bool chinese = false;
    float size_px = 16;
    std::string notice;  // what is missing, for the status line; empty when all is well
};

// (Re)builds the font atlas; call between frames. The GL font texture is recreated too.
FontInfo load_fonts(float scale);

}  // namespace kvs::gui
