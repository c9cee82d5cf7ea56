#include "gui/screenshot.h"

#include <GL/gl.h>
#include <stb_image_write.h>

#include <cstring>
#include <vector>

#include "core/error.h"

namespace kvs::gui {

void save_framebuffer_png(const std::string& path, int w, int h) {
    if (w <= 0 || h <= 0) throw Error("the window has no pixels to save");
    const std::size_t row = std::size_t(w) * 4;
    std::vector<unsigned char> px(row * h), flipped(row * h);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    // OpenGL's rows start at the bottom; PNG's at the top. The window is opaque.
    for (int y = 0; y < h; ++y) std::memcpy(&flipped[row * y], &px[row * (h - 1 - y)], row);
    for (std::size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;
    if (!stbi_write_png(path.c_str(), w, h, 4, flipped.data(), static_cast<int>(row)))
        throw Error("cannot write " + path);
}

}  // namespace kvs::gui
