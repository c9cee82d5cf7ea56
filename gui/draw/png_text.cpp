#include "gui/draw/png_text.h"

#include <cstdint>
#include <string_view>

namespace kvs::gui {
namespace {

// PNG: an 8-byte signature, then chunks (length, type, data, CRC); IHDR first, 13 bytes of data.
constexpr std::string_view kSignature = "\x89PNG\r\n\x1a\n";
constexpr std::size_t kAfterIhdr = 8 + 4 + 4 + 13 + 4;
// tEXt data: keyword, NUL, text (PNG's "Software" keyword: the program that made the image).
constexpr std::string_view kText{"Software\0kvscope", 16};

// The CRC-32 PNG puts after each chunk, over its type and data (ISO 3309, bit by bit: the chunk
// is a few bytes).
std::uint32_t crc32(std::string_view bytes) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : bytes) {
        c ^= b;
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

void put_be32(std::string& out, std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xFF));
}

// The text chunk, whole: length, "tEXt", data, CRC.
std::string text_chunk() {
    std::string typed = "tEXt";
    typed.append(kText);
    std::string chunk;
    put_be32(chunk, static_cast<std::uint32_t>(kText.size()));
    chunk += typed;
    put_be32(chunk, crc32(typed));
    return chunk;
}

}  // namespace

std::string with_kvscope_text(std::string png) {
    if (png.size() < kAfterIhdr || !std::string_view(png).starts_with(kSignature) ||
        png.compare(12, 4, "IHDR") != 0)
        return png;  // not what the encoder writes: left as it is
    png.insert(kAfterIhdr, text_chunk());
    return png;
}

OutputKind screenshot_output() {
    return {"screenshot", [](std::string_view head) {
                return head.starts_with(kSignature) && head.size() >= kAfterIhdr &&
                       head.substr(12, 4) == "IHDR" &&
                       head.substr(kAfterIhdr).starts_with(text_chunk());
            }};
}

// A JPEG's comment segment (marker FF FE, a big-endian length that counts itself, the text)
// right after the start-of-image marker FF D8.
constexpr std::string_view kJpegComment{"\xFF\xD8\xFF\xFE\x00\x09kvscope", 13};

std::string with_kvscope_comment(std::string jpeg) {
    if (!std::string_view(jpeg).starts_with(kJpegComment.substr(0, 2))) return jpeg;
    jpeg.insert(2, kJpegComment.substr(2));
    return jpeg;
}

OutputKind jpeg_screenshot_output() {
    return {"screenshot", [](std::string_view head) { return head.starts_with(kJpegComment); }};
}

}  // namespace kvs::gui
