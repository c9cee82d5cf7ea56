#include "gui/draw/gl_textures.h"

#include <GL/gl.h>

#include <algorithm>

namespace kvs::gui {
namespace {

int capacity_for(int n) {
    int c = 16;
    while (c < n) c *= 2;
    return c;
}

}  // namespace

GlTexture::~GlTexture() {
    if (id_) glDeleteTextures(1, &id_);
}

void GlTexture::allocate(int w, int h, Rgba fill) {
    if (!id_) glGenTextures(1, &id_);
    width_ = w;
    height_ = h;
    std::vector<Rgba> px(static_cast<std::size_t>(w) * h, fill);
    glBindTexture(GL_TEXTURE_2D, id_);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
}

void GlTexture::upload(int x, int y, int w, int h, const Rgba* px) {
    if (!id_ || w <= 0 || h <= 0) return;
    glBindTexture(GL_TEXTURE_2D, id_);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexSubImage2D(GL_TEXTURE_2D, 0, x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px);
}

ImTextureID GlTexture::id() const {
    return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(id_));
}

std::uint64_t texture_key(std::initializer_list<std::uint64_t> parts) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the parts' bytes
    for (std::uint64_t p : parts)
        for (int i = 0; i < 8; ++i) {
            h ^= (p >> (8 * i)) & 0xff;
            h *= 1099511628211ull;
        }
    return h;
}

void AttentionTexture::update(const AttentionMatrixRows& m, int layer, int head,
                              const HeatmapPalette& pal, std::uint64_t key) {
    const int n = m.n;
    // Positions per texel: the matrix at most kMaxSide texels across, whatever the context.
    int stride = 1;
    while ((n + stride - 1) / stride > kMaxSide) stride *= 2;
    const int texels = (n + stride - 1) / stride;
    if (key != key_ || stride != stride_ || texels > cap_ || cap_ == 0) {
        stride_ = stride;
        cap_ = capacity_for(texels);
        tex_.allocate(cap_, cap_, pal.mask);
        key_ = key;
        rows_ = 0;
    }
    // The texel rows whose query rows changed: from the one holding the first row that came (or
    // went) to the last one that holds any row.
    const int first = std::min(n, rows_) / stride_;
    const int last = (std::max(n, rows_) + stride_ - 1) / stride_;
    if (n != rows_ && last > first) {
        buf_.resize(static_cast<std::size_t>(cap_) * (last - first));
        for (int t = first; t < last; ++t)
            attention_block_pixels(m, layer, head, t * stride_, std::min(n, (t + 1) * stride_),
                                   stride_, cap_, pal, buf_.data() + std::size_t(t - first) * cap_);
        tex_.upload(0, first, cap_, last - first, buf_.data());
        uploads_ += last - first;
    }
    rows_ = n;
}

ImVec2 AttentionTexture::uv_max() const {
    const float u = uv(rows_);
    return ImVec2(u, u);
}

void KvTexture::update(const KvGridColumns& g, int layer, Rgba missing, std::uint64_t key) {
    const KvTexelChange c = update_kv_texels(texels_, g, layer, missing, key);
    const KvTexels& t = texels_;
    if (c.restarted) tex_.allocate(t.cap, t.height, missing);
    const int w = c.last - c.first, h = t.height;
    if (w <= 0) return;
    // The texels keep columns; the texture takes rows.
    buf_.resize(std::size_t(w) * h);
    for (int x = 0; x < w; ++x)
        for (int y = 0; y < h; ++y)
            buf_[std::size_t(y) * w + x] = t.px[std::size_t(c.first + x) * h + y];
    tex_.upload(c.first, 0, w, h, buf_.data());
}

ImVec2 KvTexture::uv_max() const {
    const KvTexels& t = texels_;
    return t.cap ? ImVec2(float(t.cols) / (float(t.cap) * t.stride), 1.0f) : ImVec2(0, 0);
}

}  // namespace kvs::gui
