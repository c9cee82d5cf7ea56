#pragma once
// Heatmaps as OpenGL textures, uploaded only when what they show changes. A texture is sized to
// a power of two at least as large as the matrix, so a decode step (one more row, one more
// column) is a one-row upload instead of a rebuild, and 512 tokens draw as cheaply as 8.
#include <imgui.h>

#include <cstdint>
#include <vector>

#include "gui/views/attention_matrix.h"
#include "gui/views/colormap.h"
#include "gui/views/kv_grid.h"

namespace kvs::gui {

class GlTexture {
  public:
    GlTexture() = default;
    ~GlTexture();
    GlTexture(const GlTexture&) = delete;
    GlTexture& operator=(const GlTexture&) = delete;
    // RGBA texture of w x h pixels (nearest filtering), every pixel `fill`.
    void allocate(int w, int h, Rgba fill);
    // Pixels of the rectangle at (x, y), `px` row-major w x h.
    void upload(int x, int y, int w, int h, const Rgba* px);
    ImTextureID id() const;
    int width() const { return width_; }
    int height() const { return height_; }

  private:
    unsigned id_ = 0;
    int width_ = 0, height_ = 0;
};

// One (layer, head) attention matrix. `key` names what the rows mean (session generation,
// layer, head, colours): rows of one key never change once computed, so only rows that appeared
// or disappeared (scrubbing back) are uploaded. Past kMaxSide positions a texel holds a square of
// positions (attention_block_pixels: its largest weight), so a long context costs the texture's
// side, not its length squared (32,768 positions as 32 x 32 cells a texel, 4 MiB a head).
class AttentionTexture {
  public:
    static constexpr int kMaxSide = 1024;
    void update(const AttentionMatrixRows& m, int layer, int head, const HeatmapPalette& pal,
                std::uint64_t key);
    ImTextureID id() const { return tex_.id(); }
    // UV of the bottom-right corner of the n x n matrix inside the texture.
    ImVec2 uv_max() const;
    // UV of position p along either axis (rows and columns share the texture's size).
    float uv(int p) const { return cap_ ? float(p) / (float(cap_) * stride_) : 0.0f; }
    int rows_uploaded_total() const { return uploads_; }

  private:
    GlTexture tex_;
    std::uint64_t key_ = 0;
    int cap_ = 0, rows_ = 0, uploads_ = 0;
    int stride_ = 1;  // positions per texel along each axis
    std::vector<Rgba> buf_;
};

// One layer of the KV cache: column p = token p, K channels above V channels; past
// KvTexels::kMaxColumns tokens a texel column holds a block of them (gui/views/kv_grid.h). Only
// the texel columns that changed are uploaded.
class KvTexture {
  public:
    void update(const KvGridColumns& g, int layer, Rgba missing, std::uint64_t key);
    ImTextureID id() const { return tex_.id(); }
    ImVec2 uv_max() const;
    // Whether it holds grid `g` under `key` already (kv_texels_current): update would do nothing.
    bool current(const KvGridColumns& g, std::uint64_t key) const {
        return kv_texels_current(texels_, g, key);
    }
    float scale() const { return texels_.scale; }  // |value| drawn at full colour
    int stride() const { return texels_.stride; }  // positions per texel column

  private:
    GlTexture tex_;
    KvTexels texels_;
    std::vector<Rgba> buf_;
};

// Key of the texture contents for `parts` (hash-combined).
std::uint64_t texture_key(std::initializer_list<std::uint64_t> parts);

}  // namespace kvs::gui
