#pragma once
// The panels of the one screen. Each reads the engine's snapshot (the trace of each live
// session) for the step being shown and draws it; none of them computes model math. A panel
// draws inside the ImGui window the App placed for it.
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gui/colormap.h"
#include "gui/engine_worker.h"
#include "gui/gl_textures.h"
#include "gui/layout_record.h"
#include "gui/settings.h"
#include "gui/theme.h"

namespace kvs::gui {

struct FrameContext;

// What the window remembers between frames (the engine's state lives in the snapshot).
struct UiState {
    Settings settings;
    int view_step = -1;  // the step shown; -1 follows the newest
    bool playing = false;
    double last_play_request = 0;
    bool show_help = false;
    int kv_layer = -1;  // -1: follow the attention panel's layer
    // The large heatmap shows the newest n / zoom tokens (mouse wheel; double-click: all).
    float heat_zoom = 1.0f;
    std::array<char, 2048> prompt{};
    std::array<char, 1024> model_path{};
    bool prompt_dirty = false;
    bool fonts_dirty = false;
    bool want_screenshot = false;  // Ctrl+S: saved after this frame is drawn
    bool toggle_fullscreen = false;
    std::string notice;  // a short message under the toolbar, e.g. where a screenshot went
    double notice_until = 0;
    std::string font_notice;
    double font_notice_until = 0;
    double error_until = 0;  // the engine's last error shows until then
    std::uint64_t seen_error_serial = 0;
    std::uint64_t seen_generation = 0;
    // Issue 7's lesson panel: when set, a column at the right draws it (see App::layout).
    std::function<void(FrameContext&)> lesson_panel;
};

// Heatmap textures of one session: one per (layer, head); the large view reuses its head's.
struct SessionTextures {
    std::vector<std::unique_ptr<AttentionTexture>> heads;  // [n_layers * n_heads]
    std::unique_ptr<KvTexture> kv = std::make_unique<KvTexture>();
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

    const Model* model() const { return snap.model.get(); }
    // The piece of a token for labels; "?" when out of range.
    std::string piece(int id) const;
    std::uint64_t palette_id() const;
    void record_panel(const char* name);  // the current ImGui window's rectangle
};

// The step a session shows: the one asked, clamped to what the session has.
int shown_step(const SessionView& s, int step);
// "with KV cache" / "without KV cache" for the mode step `step` ran in (a session may switch
// modes between steps); the session's own label when it has no such step.
const char* step_label(const SessionView& s, int step);

void draw_toolbar(FrameContext& f);
void draw_tokens(FrameContext& f);
void draw_attention(FrameContext& f);
void draw_kv_cache(FrameContext& f);
void draw_time(FrameContext& f);
void draw_next_token(FrameContext& f);
void draw_toy_table(FrameContext& f);
void draw_help(FrameContext& f);
void draw_messages(FrameContext& f);

// Requests the app makes from several places (toolbar buttons and keys).
void request_step(FrameContext& f);
void request_reset(FrameContext& f);
void request_prefill(FrameContext& f);
void cycle_cache(FrameContext& f);
void apply_prompt(FrameContext& f);

}  // namespace kvs::gui
