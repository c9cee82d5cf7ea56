#pragma once
// The window's frame: one screen of panels tiled over the viewport, keyboard shortcuts, play,
// and saving screenshots. The App reads the engine through EngineWorker's snapshot, under its
// lock, for the length of a frame's drawing. It owns each panel's state (the structs beside the
// panels, gui/panels/*.h), as Dear ImGui's demo keeps a window's state next to it; what several
// places share is the UiState.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gui/app/gl_window.h"
#include "gui/app/platform.h"
#include "gui/draw/fonts.h"
#include "gui/draw/frame_context.h"
#include "gui/draw/theme.h"
#include "gui/engine/engine_worker.h"
#include "gui/panels/attention.h"
#include "gui/panels/inside_attention.h"
#include "gui/panels/kv_cache.h"
#include "gui/panels/lesson.h"
#include "gui/panels/next_token.h"
#include "gui/panels/op_strip.h"
#include "gui/panels/serving.h"
#include "gui/panels/step_map.h"
#include "gui/panels/tokens.h"
#include "gui/panels/weight_types.h"
#include "gui/state/shortcuts.h"
#include "gui/state/ui_state.h"
#include "gui/views/layout_record.h"

namespace kvs::gui {

class App {
  public:
    // `platform`: where a screenshot the user asks for goes (gui/app/platform.h).
    App(GlWindow& window, EngineWorker& worker, UiState& ui, Platform& platform, bool headless);
    // Builds, draws and presents one frame. `screenshot`: also save the frame to this PNG.
    // `layout`: record where things were drawn.
    void frame(const std::string& screenshot = {}, LayoutRecord* layout = nullptr);
    // CPU time of the last frame's building (panels, texture updates, ImGui::Render), in ms.
    double last_build_ms() const { return build_ms_; }
    // Headless runs that only record where things are (--layout-json without --screenshot)
    // build every frame but leave the pixels undrawn: at 3840x2160, llvmpipe's drawing is most
    // of a frame (docs/window.md has the frame times).
    void set_draw_pixels(bool on) { draw_pixels_ = on; }
    // The large heatmap's zoom (--zoom): the newest 1/zoom of the tokens.
    void set_heatmap_zoom(float zoom) { attention_.zoom = zoom; }
    // The weight-types panel's measurement of `model`, run here to its end (headless
    // --weight-types: the frames after it show the table).
    void measure_weight_types(const std::shared_ptr<const Model>& model) {
        weight_types_.measure(model, true);
    }
    // The Serving view's run as the command line asks (--serve-*).
    ServingPanel& serving() { return serving_; }
    // The row Inside attention shows and the op strip's op (--explain, --ops, --views), and the
    // lesson open (--lesson, --answer): the panels' state, as the keys would set it.
    ExplainUi& explain() { return explain_; }
    LessonUi& lesson() { return lesson_ui_; }

  private:
    // Each key press: the shortcut table's action (gui/state/shortcuts.h), unless a panel
    // asking for keys takes it first.
    void handle_keys(FrameContext& f);
    void do_key(FrameContext& f, const KeyBinding& b, int mods);
    void scrub(FrameContext& f, int delta);
    void change_text_size(float delta);
    void back_one_layer();
    void play(FrameContext& f);
    void follow_engine(const EngineSnapshot& snap);
    void draw_panels(FrameContext& f);
    void draw_slot(FrameContext& f, const StageSlot& slot);
    void draw_panel(FrameContext& f, const std::string& id);
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
    float fonts_scale_ = 0;         // the text size fonts_ was built for; 0: none yet
    ImVector<ImWchar> cjk_ranges_;  // the Chinese glyphs in the atlas (it reads them until rebuilt)
    ThemeColours theme_;
    std::string theme_name_;
    float toolbar_h_ = 0;
    // The full toolbar's height as last measured, and for which text size, width and language.
    float toolbar_full_h_ = 0;
    bool inside_was_open_ = false;  // the inside panel was open last frame
    std::string toolbar_full_key_;
    double build_ms_ = 0;
    bool draw_pixels_ = true;
    std::array<SessionTextures, 2> textures_;
    std::map<std::string, ImVec4> panel_rects_;  // this frame's panels: x, y, w, h
    std::string glyph_text_;
    bool glyph_text_read_ = false;
    // Whether every op is timed, as the worker was last told (window_main tells it first, and
    // the first frame takes the op strip's state as told): the op strip's state, so a step with
    // the strip open runs op by op and one with it closed runs the fast path (the fused kernels
    // on a GPU).
    std::optional<bool> time_each_op_;

    // Each panel's own state between frames.
    ExplainUi explain_;   // Inside attention's row and the op strip's op
    LessonUi lesson_ui_;  // the lesson and step open, the learner's answers
    TokensPanel tokens_;
    AttentionPanel attention_;
    KvCachePanel kv_;
    OpStripPanel op_strip_;
    LessonPanel lesson_;
    LessonStagePanel lesson_stage_;
    WeightTypesPanel weight_types_;
    ServingPanel serving_;
    NextTokenPanel next_;
    StepMapPanel map_;

    // The frame's bookkeeping: what the keys asked for after this frame, and which of the
    // engine's publications (by their serials) the window has followed.
    bool want_screenshot_ = false;  // Ctrl+S: saved after this frame is drawn
    bool toggle_fullscreen_ = false;
    double last_play_request_ = 0;
    std::uint64_t seen_error_serial_ = 0;
    std::uint64_t seen_export_serial_ = 0;
    std::uint64_t seen_replay_generation_ = 0;
    std::uint64_t seen_generation_ = 0;
    std::uint64_t announced_finish_ = 0;  // generation whose end was announced
    std::uint64_t seen_lesson_serial_ = 0, seen_highlight_ = 0;
};

}  // namespace kvs::gui
