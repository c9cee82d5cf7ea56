#pragma once
// Where the panels go on the stage (the window below the toolbar): a pure function of the
// stage's size, the text height and what is shown, testable without a display.
//
// Text size scales the whole layout together: a graphic (the large heatmap, a KV grid, the time
// plots) is never drawn smaller because the text grew. Each graphic's reference size is what the
// tiled stage gives it at text scale 1 in this window; when larger text would squeeze a graphic
// below that, the stage shows fewer panels at once instead, each graphic at its reference size:
// each column becomes one panel with tabs, then the whole stage one panel with tabs. A panel can
// also be maximised (the presenter view: alone in the window), and a lesson step can ask for
// panels and how large.
//
// The inside-attention panel and the op strip sit under the stage as bands across the window;
// the inside panel gets the height its diagram needs to draw every key's numbers at the text
// size. When a band that tall would squeeze a graphic below its reference size, the inside panel
// takes a column of its own beside the stage instead (the stage then shows its panels as tabs).
#include <string>
#include <vector>

namespace kvs::gui {

struct Box {
    float x = 0, y = 0, w = 0, h = 0;
};

// The panels of the stage, by id (also the ids --layout-json records).
inline constexpr const char* kPanelIds[] = {
    "tokens", "toy", "attention", "kv", "time", "next", "map", "lesson", "stage", "inside", "ops"};

enum class Arrangement { Tiled, ColumnTabs, OneAtATime, Maximised };
const char* arrangement_name(Arrangement a);

struct StageInput {
    Box stage;             // the window below the toolbar
    float fh = 16;         // text height in pixels
    int views = 1;         // sessions side by side (compare: 2)
    bool toy = false;      // the toy table panel exists
    bool lesson = false;   // the lesson column is open
    bool titles = true;    // panels have title bars (presenter mode: none)
    int toy_rows = 6;      // rows of the toy table (tokens + header)
    int kv_variants = 3;   // rows of the KV what-if table
    std::string maximise;  // a panel id shown alone; empty: none
    // A lesson step's stage: the panels it asks for, in order; `full`: alone on the stage
    // (beside the lesson column), else each gets its column to itself.
    std::vector<std::string> focus;
    bool focus_full = false;
    // The tab chosen in each tab group (by panel id); an id not in a group picks its first.
    std::vector<std::string> chosen;
    // The inside-attention panel (its diagram: a row per key, `inside_views` diagrams side by
    // side) and the op strip.
    bool inside = false;
    int inside_keys = 0;
    int inside_views = 1;
    bool ops = false;
};

// One place on the stage: the panel drawn there (`id`) and, when several share it, all of them
// as tabs (`tabs`, id among them).
struct StageSlot {
    std::string id;
    Box box;
    std::vector<std::string> tabs;
};

// The largest a graphic may be drawn; 0: as large as its panel allows.
struct GraphicCaps {
    float heat_side = 0;  // the large heatmap's side
    float kv_grid = 0;    // one session's K and V cells, height
    float plot = 0;       // a time plot's plot area, height
};

struct StageLayout {
    Arrangement arrangement = Arrangement::Tiled;
    std::vector<StageSlot> slots;  // the inside panel and the op strip among them, when open
    bool inside_column = false;    // the inside panel in a column beside the stage (else a band)
    GraphicCaps caps;
    GraphicCaps reference;  // the tiled sizes at the design text height
    GraphicCaps drawn;      // what the graphic panels draw (in their slot or tab), caps applied
    bool squeezed = false;  // even one panel at a time cannot hold every graphic's reference
    const StageSlot* find(const std::string& id) const;
};

StageLayout layout_stage(const StageInput& in);

// The geometry the panels share with the layout (one implementation of each): what a panel's
// content area holds at text height fh.
float panel_title_h(float fh);  // an ImGui title bar
float panel_pad_w(float fh);    // left + right window padding
float panel_pad_h(float fh);    // top + bottom window padding
float frame_row_h(float fh);    // a row of controls, spacing included
Box content_of(Box slot, float fh, bool title);

// The large heatmap in a box of `w` x `h` (its title, axis labels and cells): the label room and
// the side of the cells' square. `pieces`: token pieces as labels (else positions).
struct HeatmapFrame {
    float title_h, top_h, left_w, side;
};
HeatmapFrame heatmap_frame(float w, float h, float fh, bool pieces);
// The attention panel's content: width of the small-multiples column (with the legend) and the
// side each large heatmap gets, `views` side by side.
float small_multiples_w(float content_w, float fh);
// Whether the small multiples are drawn beside the large heatmaps in that content box.
bool attention_small_multiples(Box content, float fh, int views);
float attention_heat_side(Box content, float fh, int views);
// The KV panel's content: height of the grids' block (all sessions) and one session's cells.
float kv_grids_h(Box content, float fh, int views, int variants);
float kv_cells_h(Box content, float fh, int views, int variants);
// One session's grid less its cells (its title, the read bar, the gap), and the what-if table's
// height (title, header, a row per layout).
float kv_grid_frame_h(float fh);
float kv_table_h(float fh, int variants);
// The time panel's content: the height of a plot's plot area.
float time_plot_h(Box content, float fh, int views);

// The inside-attention panel's content: what it needs to draw every key's row with its numbers
// at text height fh (the lines above the diagram, a row per key, the legend), and the width of
// one diagram's columns with numbers in them.
float inside_need_h(float fh, int keys);
float inside_need_w(float fh, int views);
// The op strip's band: its height at text height fh.
float ops_band_h(float fh);

}  // namespace kvs::gui
