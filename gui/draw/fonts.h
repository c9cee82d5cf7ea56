#pragma once
// Text that reads on a projector: DejaVu Sans at 16 px times the user's scale, with Chinese
// glyphs merged in from WenQuanYi Micro Hei when it is installed (the common simplified set plus
// every character of `extra_text`, i.e. the Chinese strings and lessons: the full range would
// cost 64 MiB of atlas), and DejaVu Sans Mono for code. Without DejaVu, ImGui's built-in font and
// a notice. $KVSCOPE_FONTS names a folder to take the font files from instead of the system's
// (tests point it at an empty one to check the fallback).
#include <imgui.h>

#include <string>

namespace kvs::gui {

struct FontInfo {
    bool dejavu = false;
    bool chinese = false;
    float size_px = 16;
    ImFont* mono = nullptr;  // DejaVu Sans Mono (ASCII), or the main font when missing
    ImFont* bold = nullptr;  // DejaVu Sans Bold (no Chinese: that is drawn twice instead), or null
    std::string notice;      // what is missing, for the status line; empty when all is well
};

// (Re)builds the font atlas; call between frames. The GL font texture is recreated too.
// `cjk_ranges` receives the Chinese glyph ranges, which the atlas reads until it is rebuilt: the
// caller keeps them that long.
FontInfo load_fonts(float scale, const std::string& extra_text, ImVector<ImWchar>& cjk_ranges);

}  // namespace kvs::gui
