#pragma once
// What a frame's drawing reads: the engine's snapshot (under the worker's lock for the frame), the
// shared window state, the theme and heatmap colours, the heatmap textures, the text size and
// fonts, and the sizes the panel layout gives each graphic. The App makes one per frame and hands
// it to each panel's draw function with the panel's own state.
#include <imgui.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/draw/gl_textures.h"
#include "gui/draw/theme.h"
#include "gui/engine/engine_worker.h"
#include "gui/state/ui_state.h"
#include "gui/views/colormap.h"
#include "gui/views/layout_record.h"
#include "gui/views/panel_layout.h"
#include "gui/views/time_series.h"

namespace kvs::gui {

// What one session's views keep between frames: heatmap textures, one per (layer, head) (the
// large view reuses its head's), the KV grid's, and the Time panel's series.
struct SessionTextures {
    std::vector<std::unique_ptr<AttentionTexture>> heads;  // [n_layers * n_heads]
    std::unique_ptr<KvTexture> kv = std::make_unique<KvTexture>();
    // Lesson 8's batch: one KV grid per sequence of the sweep's last run (textures[0] only).
    std::vector<std::unique_ptr<KvTexture>> batch_kv;
    TimeSeries time;  // extended by each frame's new steps
    // [earlier session] how far this session's K/V bytes series equals that one's
    std::vector<SeriesAgreement> kv_same;
};

struct FrameContext {
    EngineWorker& worker;
    const EngineSnapshot& snap;
    UiState& ui;
    const ThemeColours& theme;
    HeatmapPalette pal;
    std::array<SessionTextures, 2>& textures;
    LayoutRecord* layout;  // where panels record their geometry; null when nobody asked
    int step = -1;         // the step shown (index into each session's trace); -1: none yet
    float font_px = 16;
    float toolbar_bottom = 0;  // y where the panels start
    // The toolbar in its compact form: its full rows would take more of the window's height than
    // the stage can spare at this text size (App::draw_panels measures them).
    bool toolbar_compact = false;
    ImFont* mono = nullptr;     // for code in the lesson text
    ImFont* bold = nullptr;     // for bold lesson text (null: none installed)
    bool lesson_stage = false;  // the lesson step's measurements are on the stage (not its column)
    GraphicCaps caps{};         // the largest the stage lets each graphic be (0: no limit)
    // What each graphic is at the design text height (gui/views/panel_layout.h): a panel keeps its
    // graphic at least this large, its notes beside or after it when above it they would not fit.
    GraphicCaps reference{};

    const Model* model() const { return snap.model.get(); }
    // The piece of a token for labels; "?" when out of range.
    std::string piece(int id) const;
    // The piece as a chip or axis label shows it: spaces as '·', control bytes and bytes that
    // are not UTF-8 as <0xNN>, characters the font lacks as <U+XXXX> (never a '?' box).
    std::string label(int id) const;
    // `text` with each character the font lacks (an emoji in an error message) as <U+XXXX>.
    static std::string drawable(const std::string& text);
    std::uint64_t palette_id() const;
    void record_panel(const char* name);  // the current ImGui window's rectangle
};

}  // namespace kvs::gui
