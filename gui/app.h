#pragma once
// The window's frame: one screen of panels tiled over the viewport, keyboard shortcuts, play,
// and saving screenshots. The App reads the engine through EngineWorker's snapshot, under its
// lock, for the length of a frame's drawing.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gui/engine_worker.h"
#include "gui/fonts.h"
#include "gui/gl_window.h"
#include "gui/layout_record.h"
#include "gui/panels.h"
#include "gui/platform.h"
#include "gui/theme.h"

namespace kvs::gui {

class App {
  public:
    // `platform`: where a screenshot the user asks for goes (gui/platform.h).
    App(GlWindow& window, EngineWorker& worker, UiState& ui, Platform& platform, bool headless);
    // Builds, draws and presents one frame. `screenshot`: also save the frame to this PNG.
    // `layout`: record where things were drawn.
    void frame(const std::string& screenshot = {}, LayoutRecord* layout = nullptr);
    // CPU time of the last frame's building (panels, texture updates, ImGui::Render), in ms.
    double last_build_ms() const { return build_ms_; }
    // Headless runs that only record where things are (--layout-json without --screenshot)
    // build every frame but leave the pixels undrawn: at 3840x2160, llvmpipe's drawing was most
    // of a frame.
    void set_draw_pixels(bool on) { draw_pixels_ = on; }

  private:
    void handle_keys(FrameContext& f);
    void play(FrameContext& f);
    void follow_engine(const EngineSnapshot& snap);
    void draw_panels(FrameContext& f);
    void draw_slot(FrameContext& f, const StageSlot& slot);
    void toggle_maximise(const std::string& id);
    void frame_shown_panel(FrameContext& f);
    bool showing_lesson_step(const FrameContext& f) const;
    // Every character the window may have to draw beyond the common Chinese set: the Chinese
    // strings and lesson files (read once).
    const std::string& glyph_text();
    std::vector<std::uint32_t> missing_glyphs();

    GlWindow& window_;
    EngineWorker& worker_;
    UiState& ui_;
    Platform& platform_;
    bool headless_;
    FontInfo fonts_;
    float fonts_scale_ = 0;
    ThemeColours theme_;
    std::string theme_name_;
    float toolbar_h_ = 0;
    double build_ms_ = 0;
    bool draw_pixels_ = true;
    std::array<SessionTextures, 2> textures_;
    std::map<std::string, ImVec4> panel_rects_;  // this frame's panels: x, y, w, h
    std::string glyph_text_;
    bool glyph_text_read_ = false;
};

}  // namespace kvs::gui
