#pragma once
// The panels of the one screen. Each reads the engine's snapshot (the trace of each live
// session) for the step being shown and draws it; none of them computes model math. A panel
// draws inside the ImGui window the App placed for it.
#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gui/colormap.h"
#include "gui/engine_worker.h"
#include "gui/gl_textures.h"
#include "gui/layout_record.h"
#include "gui/lesson_catalog.h"
#include "gui/markdown.h"
#include "gui/markdown_view.h"
#include "gui/settings.h"
#include "gui/stage_layout.h"
#include "gui/strings.h"
#include "gui/theme.h"
#include "lessonlib/lesson_ask.h"

struct ImFont;

namespace kvs {
struct Roofline;    // lessonlib/roofline.h
struct BatchTable;  // lessonlib/batch_sweep.h
}  // namespace kvs

namespace kvs::gui {

struct FrameContext;

// Which lesson and step are open (the toolbar, the keys, the lesson panel and --lesson open
// them; the stage follows the step's @show), and what the learner answered. What the engine did
// for them is in the snapshot's LessonRun; how the lesson panel draws them is its own
// (gui/panel_lesson.h).
struct LessonUi {
    LessonCatalog catalog;
    bool catalog_loaded = false;
    int number = 0;  // the lesson open; 0: none
    int step = 0;    // the step shown, from 0
    // @ask: what the learner answered in the lesson open, by step (an empty answer: they asked
    // to see the engine's without one); the number being typed for the step's question.
    std::map<int, LearnerAnswer> answers;
    std::string typed;
};

// The "Inside attention" panel (gui/panel_inside_attention.cpp) and the op strip
// (gui/panel_op_strip.cpp): which row they show. Opened by a click on a heatmap, the keys, a
// lesson's @explain or --explain.
struct ExplainUi {
    bool open = false;
    bool from_lesson = false;  // opened by a lesson's @explain: closes when the lesson moves on
    int session = 0;           // whose trace (compare mode: the heatmap clicked)
    int layer = 0, head = 0;
    int q_pos = -1;  // the query's position; -1: the newest row of the step shown
    // The stage of the row's arithmetic shown (kExplainStages); -1: every stage at once. Played:
    // the next stage every kStagePlaySeconds.
    int stage = -1;
    bool stage_playing = false;
    double stage_shown_at = 0;
    bool op_strip = false;
    int op = -1;  // the op highlighted in the op strip; -1: none
};

// What the window remembers between frames and several places share: the remembered settings
// (text size, language, theme, ...), the step shown and play, which panels are shown, the text
// fields that actions outside their panels fill, and the messages under the toolbar. A panel's
// own state between frames is a struct beside it (gui/panel_*.h), owned by the App; the engine's
// state lives in the snapshot.
struct UiState {
    Settings settings;
    int view_step = -1;  // the step shown; -1 follows the newest
    bool playing = false;
    bool show_help = false;
    bool show_lesson = false;        // the lesson panel: a column at the right (App::draw_panels)
    bool show_weight_types = false;  // the weight-types panel (key W)
    bool show_serving = false;       // the Serving view in place of the stage (key V)
    // The text fields' contents (imgui_stdlib's InputText grows them: no length limit): the
    // prompt (the tokens panel's field; a model, a lesson or a replay sets it too) and the
    // toolbar's file path (Open file..., a file dropped on the window, --open).
    std::string prompt;
    std::string model_path;
    bool prompt_dirty = false;
    std::string notice;  // a short message under the toolbar, e.g. where a screenshot went
    double notice_until = 0;
    std::string font_notice;
    double font_notice_until = 0;
    double error_until = 0;  // the engine's last error shows until then
    LessonUi lesson;
    ExplainUi explain;
    Lang lang = Lang::En;  // the language in use: settings.lang when its font is there
    // The stage: a panel shown alone (its id; empty: none), presenter mode (no toolbar, no
    // title bars), and the tab chosen in each tab group, newest first.
    std::string maximised;
    bool presenter = false;
    std::vector<std::string> chosen_tabs;
    // The compact toolbar (large text on a small window: one row of stepping) opened in full.
    bool toolbar_more = false;
};

// Heatmap textures of one session: one per (layer, head); the large view reuses its head's.
struct SessionTextures {
    std::vector<std::unique_ptr<AttentionTexture>> heads;  // [n_layers * n_heads]
    std::unique_ptr<KvTexture> kv = std::make_unique<KvTexture>();
    // Lesson 8's batch: one KV grid per sequence of the sweep's last run (textures[0] only).
    std::vector<std::unique_ptr<KvTexture>> batch_kv;
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
    // What each graphic is at the design text height (gui/stage_layout.h): a panel keeps its
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

// SameLine when an item `w` wide still fits on the line, else the next line (a narrow panel or
// large text wraps a row of controls instead of cutting it off, or drawing text under one).
void same_line_or_wrap(float w, float spacing = -1);
// The width of `s` in pixels in the current font at text height `px`.
float text_width(const std::string& s, float px);
// `s` cut to whole characters and ".." when wider than max_w pixels in the current font, at text
// height `px` (0: the current font size).
std::string clipped(const std::string& s, float max_w, float px = 0);

// Why generation ended, in the window's words.
const char* finish_reason_text(FinishReason reason);

// The step a session shows: the one asked, clamped to what the session has.
int shown_step(const SessionView& s, int step);
// "with KV cache" / "without KV cache" for the mode step `step` ran in (a session may switch
// modes between steps); the session's own label when it has no such step.
const char* step_label(const SessionView& s, int step);

void draw_toolbar(FrameContext& f);
// One KV grid's cells (gui/kv_grid.h) through `tex` (uploaded when `key` changes): K above V,
// cell_w x cell_h pixels per value, from `at` + lab_w (the K and V labels in front; 0: none);
// the columns written last outlined, a bar under the columns the last query read. Recorded for
// --layout-json as `who`'s grid; hovering a cell names it. Returns where the cells are.
struct KvCellsView {
    ImVec2 a, b;  // top left and bottom right of the cells
    float cell_w = 0, cell_h = 0;
};
KvCellsView draw_kv_cells(FrameContext& f, const KvGridColumns& g, int layer, KvTexture& tex,
                          std::uint64_t key, ImVec2 at, float lab_w, float cell_w, float cell_h,
                          const std::string& who);
void draw_time(FrameContext& f);
void draw_next_token(FrameContext& f);
void draw_toy_table(FrameContext& f);
// The bidirectional view's measurement, max |ΔK| per layer for each session, at `at`, `width`
// wide; returns the height drawn.
float draw_kv_deltas(FrameContext& f, ImVec2 at, float width, bool draw = true);
void draw_inside_attention(FrameContext& f);
void draw_help(FrameContext& f);
void draw_messages(FrameContext& f);
// The heads the lesson step shown compares, when it highlights more than one (lesson 7: two query
// heads of one K/V group), as (layer, head) in the order of its @highlight lines; else empty.
std::vector<std::pair<int, int>> lesson_step_heads(FrameContext& f);
// The roofline picture of a @scale (lessonlib/roofline.h), `size` in pixels.
void draw_roofline(FrameContext& f, const Roofline& r, ImVec2 size);
// Lesson 8: the KV caches of the batch sweep's last run side by side, one per sequence, at the
// KV panel's `layer` (-1: the attention panel's), in a box of `size` at the cursor.
void draw_batch_caches(FrameContext& f, const BatchTable& t, int layer, ImVec2 size);

// The lesson panel's actions (buttons, keys, the menu, --lesson): they show step `step` of
// lesson `number` and have the engine play it (the next step on top of the previous ones, else
// a replay from the first step). A lesson that cannot be read shows its error instead.
// A step with an @ask not yet answered waits for its answer before the engine plays it.
void open_lesson(UiState& ui, EngineWorker& worker, int number, int step);
void lesson_next(FrameContext& f);
// The lesson step shown asks its question and waits (its @ask not yet answered).
bool lesson_question_waits(UiState& ui);
// The learner's answer to the step's question: kept, then the engine plays the step.
void answer_lesson_question(UiState& ui, EngineWorker& worker, const LearnerAnswer& a);
// Keys while the question waits: 1-4 choose, digits, '.', '-' and Backspace type a number, Enter
// gives it (nothing typed: the engine's answer without one). True when `key` (GLFW) was used.
bool lesson_question_key(FrameContext& f, int key);
// The question, or the learner's answer beside the engine's with the why, at the cursor (the
// lesson panel's results, always in view; gui/panel_lesson_ask.cpp).
void draw_lesson_question(FrameContext& f, const LessonStep& step, const StepOutcome* out,
                          LessonRecord* rec, const MdStyle& style);
void lesson_back(FrameContext& f);
void close_lesson(UiState& ui);
// Opens the inside-attention panel on (layer, head) at query position q_pos (-1: the newest) of
// session `session`; the heatmap shown large follows.
void open_inside_attention(UiState& ui, int session, int layer, int head, int q_pos);
// The keys' moves: the query row above / below (delta -1 / +1), clamped to the rows computed.
void move_inside_attention_row(FrameContext& f, int delta);
// The stages of one row's arithmetic the panel steps through: q and the K rows, q·k_j, ×1/√d_k,
// the mask, the softmax, ×V, the output.
inline constexpr int kExplainStages = 7;
// The stage whose softmax gives the weights (from 0; the panel says it from 1).
inline constexpr int kSoftmaxStage = 4;
inline constexpr double kStagePlaySeconds = 1.5;
// The next / previous stage (from every stage at once to the first, from the last back to all).
void step_explain_stage(UiState& ui, int delta);
// The op strip's key: highlights the next / previous op of the step shown (opening the strip);
// the inside-attention panel follows the op's layer.
void walk_ops(FrameContext& f, int delta);
// Draws `text` at `p` in the current window's draw list (--layout-json records it with all text,
// gui/text_record.h); `size` 0: the current font size.
void put_text(ImVec2 p, ImU32 col, const std::string& text, float size = 0);
// put_text wrapped at word boundaries to `width`, one line per put_text; returns the height used.
float put_wrapped(ImVec2 p, ImU32 col, const std::string& text, float width);
// The height put_wrapped would take.
float wrapped_height(const std::string& text, float width);

// Sets the language of the window and the lessons ("en" / "zh").
void set_ui_language(UiState& ui, const std::string& code);

// Requests the app makes from several places (toolbar buttons and keys).
void request_step(FrameContext& f);
void request_reset(FrameContext& f);
void request_prefill(FrameContext& f);
void cycle_cache(FrameContext& f);
// The bidirectional view (M): the same model without its causal mask beside it, and back.
void toggle_bidirectional(FrameContext& f);
void apply_prompt(FrameContext& f);
// Toolbar's Open file (and --open, a file dropped on the window or the page): a file that does
// not open shows why and changes nothing. A trace JSON (by its first bytes) is replayed.
void open_model_file(UiState& ui, EngineWorker& worker, const std::string& path);
// A recorded run (trace JSON) shown in place of the model: --replay, a dropped trace, the model
// menu's recorded runs. Not remembered in the settings: the next start opens the model.
void open_replay_file(UiState& ui, EngineWorker& worker, const std::string& path);
// The window's exports (the toolbar's Export menu, Ctrl+E for all four) into the current folder,
// named by the time: the attention matrix of the head and step shown and the per-step table as
// CSV, the run as trace JSON and as Chrome / Perfetto trace events.
enum class ExportWhat { Attention, Steps, TraceJson, TraceEvents, All };
void export_shown(FrameContext& f, ExportWhat what);

}  // namespace kvs::gui
