#pragma once
// Which image format a screenshot's file name asks for: read by the option check (gui/state/
// options.cpp) before a window opens and by the writer (gui/draw/screenshot.cpp).
#include <algorithm>
#include <cctype>
#include <string>

namespace kvs::gui {

enum class ImageFormat { None, Png, Jpeg };

// The format a screenshot's name asks for: JPEG for .jpg / .jpeg (any case), None for another
// image format's name (.bmp, .gif, .webp, ...: refused rather than written as something else),
// PNG for .png and for every other name (a device such as /dev/null, a name without one).
inline ImageFormat image_format_named(const std::string& path) {
    const auto dot = path.rfind('.');
    if (dot == std::string::npos || path.find('/', dot) != std::string::npos)
        return ImageFormat::Png;
    std::string ext = path.substr(dot + 1);
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == "jpg" || ext == "jpeg") return ImageFormat::Jpeg;
    for (const char* other : {"bmp", "gif", "webp", "tif", "tiff", "avif", "heic", "ppm", "pgm",
                              "pnm", "svg", "ico", "tga", "jxl", "jp2"})
        if (ext == other) return ImageFormat::None;
    return ImageFormat::Png;
}

}  // namespace kvs::gui
