#pragma once
// Where a frame drew its panels, heatmaps and KV grids, in window pixels (origin top left), so a
// screenshot test can find the heatmap's cells without guessing. Written by --layout-json.
#include <cstdint>
#include <string>
#include <vector>

#include "core/util/output_file.h"
#include "gui/views/colormap.h"

namespace kvs::gui {

struct Rect {
    float x = 0, y = 0, w = 0, h = 0;
};

struct HeatmapRecord {
    std::string session;  // the session's label
    bool main = false;    // the large heatmap (else a small multiple)
    int layer = 0, head = 0;
    int n = 0;                       // rows = columns of the matrix (tokens in the cache)
    int first = 0;                   // first position drawn (zoomed in: the cells are first..n-1)
    Rect rect;                       // the (n - first) x (n - first) cells
    int new_begin = 0, new_end = 0;  // rows computed at the step shown (outlined)
    // Rows the step shown recomputed without the cache (outlined in their own colour); equal
    // bounds: none.
    int recomputed_begin = 0, recomputed_end = 0;
    // Covered while Inside attention builds this head's row before its softmax stage.
    bool weights_hidden = false;
};

struct KvGridRecord {
    std::string session;
    int layer = 0;
    int columns = 0;  // tokens in the cache
    int rows = 0;     // 2 x kv_dim: K channels, then V channels
    Rect rect;        // the cells: columns x cell_w wide
    float cell_w = 0, cell_h = 0;
    int written_begin = 0, written_end = 0;
};

// A plot the frame drew: its series' labels and values, and what x means.
struct PlotRecord {
    std::string name;
    std::vector<double> x;
    std::vector<std::pair<std::string, std::vector<double>>> series;
    Rect rect;           // the plot's box (title, plot area and x labels); empty where not recorded
    bool log_y = false;  // its y axis on a log scale (else linear); the title says which
    // Each series' legend entry as drawn (its label, the lines it took), inside `rect`; none
    // where the plot draws no legend of its own.
    std::vector<std::pair<std::string, Rect>> legend;
};

// One line of text as drawn (gui/draw/text_record.h).
struct TextRecord {
    std::string panel;  // the panel's id (its ImGui window, "toolbar", ...)
    std::string text;   // the characters, spaces where the pen jumped
    Rect rect;          // the glyphs' union, window pixels
    Rect clip;          // the clip rectangle it was drawn in
    // Part of it lies outside `clip` (cut off) at the left or right edge (x), the top or bottom
    // (y).
    bool clipped_x = false, clipped_y = false;
    // Drawn in a window that scrolls that way: text cut at that edge is a scroll away from view.
    bool scrolls_x = false, scrolls_y = false;
    bool overlay = false;  // a floating overlay (help, tooltips, popups)
    bool vertical = false;
};

// The lesson panel as drawn: which lesson and step, and the checks shown beside it.
struct LessonRecord {
    int number = 0;
    std::string title;
    int step = 0, steps = 0;  // step is 1-based, as the panel says it
    std::string step_title;
    int checks_passed = 0, checks_failed = 0;
    bool running = false;     // the step is still being played on the engine
    std::string shown_panel;  // the panel @show pointed at (framed in the window)
    std::vector<std::string> errors;
    // The step's @ask: "" none, "asking" (waits for the learner), "playing", "revealed".
    std::string ask;
    std::string ask_question, ask_learner, ask_engine;  // in the window's language
    int ask_right = -1;  // revealed: 1 the learner's answer is the engine's, 0 not, -1 no answer
    // Waiting: the question, its choices and what to press are all in view, no scrolling.
    bool ask_fits = true;
};

// One session's row as Inside attention drew it: its table (every key, masked ones included:
// q·k, ×1/√d_k, the mask and the softmax weights, each column as far as the stage shows it),
// each key's label (its position and token), the row's numbers line, and the stage's matrix
// beside it (a stage of the scores with room for it: [matrix_rows, matrix_keys] cells, NaN where
// a cell has no number, such as a masked weight).
struct ExplainRowRecord {
    std::string session;
    int step = -1, position = 0;
    std::string mask;  // "causal" or "bidirectional"
    std::vector<float> raw, scaled, weights;
    std::vector<int> masked;
    std::vector<std::string> key_labels;
    std::string numbers;
    int matrix_rows = 0, matrix_keys = 0, matrix_first_position = 0, matrix_masked = 0;
    std::vector<float> matrix;
    float number_px = 0;  // the text size the diagram drew its numbers at
};

// A projection stage of Inside attention as drawn (stage -1: none shown): the vectors that stage
// draws (empty where it draws none), its numbers, the weight strip's shape, and the text size its
// numbers were drawn at.
struct ProjectionRecord {
    int stage = -1;                // 0 .. kProjectionStages - 1 (gui/views/inside_attention_text.h)
    std::string why, weights_why;  // why nothing (or no weight strip) is drawn
    std::vector<float> x, x_norm, q, k, v, q_rope, k_rope, q_angle, k_angle;
    double x_mean = 0, x_rms = 0, q_len = 0, q_rope_len = 0, k_len = 0, k_rope_len = 0;
    int cache_row = -1, keys_read = 0, read_cached = 0, read_new = 0, read_recomputed = 0;
    int strip_rows = 0, strip_cols = 0, strip_block = 0, strip_first_row = -1;
    float number_px = 0;
};

// The row the inside-attention panel shows (open false: the panel is closed).
struct ExplainRecord {
    bool open = false;
    std::string session;
    int step = -1, layer = 0, head = 0, row = 0, q_pos = 0;
    int n_keys = 0, head_dim = 0;
    std::string phase, mode;
    std::string why;   // why nothing is shown, when so
    int stage = -1;    // the stage of its arithmetic shown; -1: all at once
    int sessions = 1;  // rows drawn side by side (compare mode: 2)
    int op = -1;       // the op strip's highlighted op; -1: none
    int op_layer = -1;
    int position = 0;                     // the query's position (from 1), as the header says it
    std::vector<ExplainRowRecord> drawn;  // each session's row, in the order drawn
    ProjectionRecord projection;          // the first session's, at a projection stage
};

// The Serving view as drawn (open false: closed): the pool grid's cells and what the step shown
// holds.
struct ServingRecord {
    bool open = false;
    int blocks = 0, cols = 0, block_size = 0;
    Rect grid;  // the cells: cols x cell wide
    float cell = 0;
    int shot = -1, shots = 0;  // the step shown (0: before the first) of those run
    int used_blocks = 0, contiguous_blocks = 0;
    int multi_holder_blocks = 0;  // held by several requests now
    int cached_free_blocks = 0;   // no holder, kept in the prefix cache
    int cached_blocks_found = 0;  // found in the prefix cache at this step's admissions
    int prompt_chunks = 0;        // prompts this step's pass computed part of
    int budget = 0;               // the token budget (0: none)
    bool prefix_cache = false;    // the "prefix cache" box as drawn (what the engine ran)
    int let_go_entries = 0;       // block table entries a window let go (drawn as dashes)
    Rect tables;                  // the requests' block tables
    // Each block table entry naming a pool block: its cell (its number drawn in it) and the
    // number.
    std::vector<std::pair<int, Rect>> table_cells;
    int prefill_rows = 0, decode_rows = 0;
    std::vector<std::string> states;  // each request's, as serve_state_name says it
};

// The Next token panel's stages as drawn (gui/views/sampling_view.h): the settings they were
// shaped at, whether that was a preview (the controls' settings over the step's logits, no draw)
// or the draw the step made, and each stage's numbers per token, best first.
struct SamplingRecord {
    bool drawn = false;  // the panel drew stages (greedy draws its table of tokens instead)
    bool preview = false;
    int step = -1;
    float temperature = 0, top_p = 0;
    int top_k = 0;
    float coin = -1;
    int drawn_id = -1;
    std::vector<int> ids;
    std::vector<float> logit, scaled, tempered, top_k_p, final_p;
    float rest_tempered = 0, rest_top_k = 0, rest_final = 0;
    std::vector<std::string> columns;  // the stage columns drawn, by their titles
};

// The map of the step as drawn: a column per layer, where it was drawn (a click there opens Inside
// attention at that layer), and the counts each shows.
struct MapColumnRecord {
    int layer = 0;
    Rect rect;
    int cached_queries = 0, cached_needed = 0, kv_read = 0, kv_written = 0;
    int uncached_queries = 0, uncached_needed = 0, kv_recomputed = 0;
};
struct MapRecord {
    bool drawn = false;
    int step = -1;
    std::string ran;  // "cached" or "uncached"
    std::vector<MapColumnRecord> columns;
};

struct LayoutRecord {
    int width = 0, height = 0;       // framebuffer pixels
    float scale_x = 1, scale_y = 1;  // framebuffer pixels per window coordinate
    std::string model, theme, backend;
    int step = -1, steps = 0;
    Rgba mask, missing, empty_row, highlight, recomputed;
    Rgba background;  // the window's clear colour, behind every panel
    std::vector<std::pair<std::string, Rect>> panels;
    std::string arrangement;  // how the stage placed the panels (gui/views/panel_layout.h)
    std::vector<HeatmapRecord> heatmaps;
    std::vector<KvGridRecord> kv_grids;
    std::string lang;  // the language the window's words are in
    bool font_dejavu = false, font_chinese = false;
    std::vector<std::uint32_t>
        missing_glyphs;                 // characters of the strings and lessons the font lacks
    std::vector<std::string> messages;  // the lines floating under the toolbar
    std::vector<std::string> tokens;    // the token chips of the first session, as labelled
    std::string finish;                 // why generation ended, as the tokens panel says it
    std::vector<PlotRecord> plots;
    int next_tokens_shown = 0;  // rows the Next-token panel drew (of the step's recorded top)
    LessonRecord lesson;        // number 0: no lesson panel
    std::vector<TextRecord> texts;
    ExplainRecord explain;
    ServingRecord serving;
    SamplingRecord sampling;
    MapRecord map;

    void clear_frame() {
        explain = ExplainRecord();
        sampling = SamplingRecord();
        map = MapRecord();
        serving = ServingRecord();
        panels.clear();
        heatmaps.clear();
        kv_grids.clear();
        messages.clear();
        tokens.clear();
        finish.clear();
        plots.clear();
        next_tokens_shown = 0;
        texts.clear();
        lesson = LessonRecord();
    }
    // indent -1: one line (the web page prints it to the console as one message).
    std::string to_json(int indent = 1) const;
};

// A layout record as an output file: an earlier one (its first key is kvscope_layout) is
// replaced.
OutputKind layout_json_output();

}  // namespace kvs::gui
