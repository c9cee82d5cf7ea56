#include "gui/draw/screenshot.h"

#include <GL/gl.h>
#include <stb_image_write.h>

#include <string>
#include <vector>

#include "core/util/error.h"
#include "core/util/output_file.h"
#include "gui/draw/png_text.h"

namespace kvs::gui {

namespace {

ImageFormat format_of(const std::string& path) {
    const ImageFormat format = image_format_named(path);
    if (format == ImageFormat::None)
        throw Error(path + ": a screenshot is written as PNG or JPEG (.jpg): name it so");
    return format;
}

}  // namespace

void check_screenshot_path(const std::string& path) {
    check_output_path(
        path, format_of(path) == ImageFormat::Png ? screenshot_output() : jpeg_screenshot_output());
}

void save_framebuffer(const std::string& path, int w, int h) {
    const ImageFormat format = format_of(path);
    if (w <= 0 || h <= 0) throw Error("the window has no pixels to save");
    const std::size_t row = std::size_t(w) * 4;
    std::vector<unsigned char> px(row * h), rgb(std::size_t(w) * 3 * h);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    // OpenGL's rows start at the bottom, an image file's at the top; the window is opaque, so RGB.
    for (int y = 0; y < h; ++y) {
        const unsigned char* src = &px[row * (h - 1 - y)];
        unsigned char* dst = &rgb[std::size_t(w) * 3 * y];
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < 3; ++c) dst[x * 3 + c] = src[x * 4 + c];
    }
    stbi_write_png_compression_level = 9;  // screenshots go into the docs: smaller is better
    // Encoded in memory, then written by the one output writer (temporary file and rename, the
    // run's inputs refused, write errors such as a full disk reported).
    std::string bytes;
    const auto append = [](void* ctx, void* data, int size) {
        static_cast<std::string*>(ctx)->append(static_cast<const char*>(data),
                                               static_cast<std::size_t>(size));
    };
    const bool encoded = format == ImageFormat::Png
                             ? stbi_write_png_to_func(append, &bytes, w, h, 3, rgb.data(), w * 3)
                             : stbi_write_jpg_to_func(append, &bytes, w, h, 3, rgb.data(), 90);
    if (!encoded)
        throw Error(path + (format == ImageFormat::Png ? ": cannot encode the PNG"
                                                       : ": cannot encode the JPEG"));
    if (format == ImageFormat::Png)
        write_output_file(path, with_kvscope_text(std::move(bytes)), screenshot_output());
    else
        write_output_file(path, with_kvscope_comment(std::move(bytes)), jpeg_screenshot_output());
}

}  // namespace kvs::gui
