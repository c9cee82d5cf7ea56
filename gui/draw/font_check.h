#pragma once
// A font file is checked here before ImGui sees it: ImGui's stb_truetype trusts the file (it has
// no length to check against), so a 0-byte, junk or truncated file in the font folder
// (KVSCOPE_FONTS or the system's) would abort or crash the window. What is checked: the size,
// a TrueType/OpenType/TTC header, every table record inside the file, the tables stb_truetype
// reads present and long enough for what it reads from them (head, hhea, maxp, hmtx, cmap and
// its subtables, loca within glyf), then stb_truetype's own offset and init checks.
#include <cstddef>
#include <string>
#include <vector>

namespace kvs::gui {

// "" when font 0 of `data` is one the window can load, else why not (a few words).
std::string font_problem(const unsigned char* data, std::size_t size);

struct FontBytes {
    std::vector<unsigned char> bytes;  // empty when the file was refused
    std::string problem;               // "PATH: why", empty when the bytes are good
};
// Reads `path` (at most 64 MiB) and checks it with font_problem().
FontBytes read_font(const std::string& path);

}  // namespace kvs::gui
