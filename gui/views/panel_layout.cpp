#include "gui/views/panel_layout.h"

#include <algorithm>
#include <cmath>

namespace kvs::gui {
namespace {

// The text height of the reference stage: text scale 1 (the 16 px font). Its graphics are the
// sizes no larger text may undercut; beyond it the stage shows fewer panels at once.
constexpr float kDesignFh = 16.0f;
// A panel shown alone: its text at most this much larger than the window's, and at most this
// many text heights across a 16:9 window's width (a 1920-pixel wide screen: 40 px text).
constexpr float kAloneMaxZoom = 2.5f;
constexpr float kAloneLinesAcross = 48.0f;

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// The chrome (title bar, padding) of a panel and, for a tab group, its tab bar.
Box panel_content(const StageSlot& s, float fh, bool titles) {
    Box c = content_of(s.box, fh, titles);
    if (s.tabs.size() > 1) {
        c.y += frame_row_h(fh);
        c.h -= frame_row_h(fh);
    }
    return c;
}

struct Columns {
    Box left, right, lesson;
};

// The lesson column's width at text height fh: 22 lines of text wide, between 30% and 45% of
// the stage.
float lesson_column_w(const StageInput& in, float fh) {
    const Box& s = in.stage;
    return in.lesson ? std::floor(std::max(s.w * 0.3f, std::min(fh * 22, s.w * 0.45f))) : 0;
}

// `lesson_w` < 0: the lesson column's own width at fh.
Columns columns(const StageInput& in, float fh, float lesson_w = -1) {
    const Box& s = in.stage;
    const float gap = 2;
    if (lesson_w < 0 || !in.lesson) lesson_w = lesson_column_w(in, fh);
    const float w = s.w - lesson_w;
    const float left_w = std::floor(w * 0.52f);
    Columns c;
    c.left = {s.x, s.y, left_w, s.h};
    c.right = {s.x + left_w + gap, s.y, w - left_w - gap, s.h};
    c.lesson = {s.x + w + gap, s.y, lesson_w - gap, s.h};
    return c;
}

float chrome_h(float fh, bool titles) {
    return (titles ? panel_title_h(fh) : 0) + panel_pad_h(fh);
}

// Columns stacked top to bottom: text panels get what their text needs (or their share), the
// graphic panel of each column the rest.
std::vector<StageSlot> tiled(const StageInput& in, float fh) {
    const Columns c = columns(in, fh);
    const float gap = 2, H = c.left.h, ch = chrome_h(fh, in.titles);
    std::vector<StageSlot> out;
    float y = c.left.y;
    const float tokens_h = std::floor(std::max(fh * 6.2f + ch, H * (in.toy ? 0.18f : 0.2f)));
    out.push_back({"tokens", {c.left.x, y, c.left.w, tokens_h}, {}});
    y += tokens_h + gap;
    if (in.toy) {
        const float toy_h = std::floor(std::max((in.toy_rows + 1.6f) * fh * 1.35f + ch, H * 0.22f));
        out.push_back({"toy", {c.left.x, y, c.left.w, toy_h}, {}});
        y += toy_h + gap;
    }
    out.push_back({"attention", {c.left.x, y, c.left.w, c.left.y + H - y}, {}});

    const int next_rows = 5;  // the toy's ten in two columns
    const float next_h = std::floor(std::max(
        ch + 2 * frame_row_h(fh) + fh * (4.8f + 1.25f * next_rows), H * (in.toy ? 0.3f : 0.22f)));
    const float time_h = std::floor(
        std::max(ch + (in.views + 1) * fh * 1.35f + frame_row_h(fh) + fh * 7.5f, H * 0.32f));
    const float kv_h = std::floor(H - next_h - time_h - 2 * gap);
    out.push_back({"kv", {c.right.x, c.right.y, c.right.w, kv_h}, {}});
    out.push_back({"time", {c.right.x, c.right.y + kv_h + gap, c.right.w, time_h}, {}});
    const float ny = c.right.y + kv_h + time_h + 2 * gap;
    out.push_back({"next", {c.right.x, ny, c.right.w, c.right.y + H - ny}, {}});
    if (in.lesson) out.push_back({"lesson", c.lesson, {}});
    return out;
}

// The id a tab group shows: the one chosen, else its first.
std::string pick(const std::vector<std::string>& tabs, const std::vector<std::string>& chosen) {
    for (const auto& c : chosen)
        if (has(tabs, c)) return c;
    return tabs.front();
}

std::vector<StageSlot> column_tabs(const StageInput& in, float fh, float lesson_w = -1) {
    const Columns c = columns(in, fh, lesson_w);
    std::vector<std::string> left = {"attention", "tokens"};
    if (in.toy) left.push_back("toy");
    const std::vector<std::string> right = {"kv", "time", "next", "map"};
    std::vector<StageSlot> out = {{pick(left, in.chosen), c.left, left},
                                  {pick(right, in.chosen), c.right, right}};
    if (in.lesson) out.push_back({"lesson", c.lesson, {}});
    return out;
}

std::vector<StageSlot> one_at_a_time(const StageInput& in, float fh) {
    const Columns c = columns(in, fh);
    std::vector<std::string> all = {"attention", "kv", "time", "next", "map", "tokens"};
    if (in.toy) all.push_back("toy");
    const Box main{c.left.x, c.left.y, c.right.x + c.right.w - c.left.x, c.left.h};
    std::vector<StageSlot> out = {{pick(all, in.chosen), main, all}};
    if (in.lesson) out.push_back({"lesson", c.lesson, {}});
    return out;
}

// The graphics a set of slots draws at text height fh: each graphic panel measured in its slot.
GraphicCaps measure(const std::vector<StageSlot>& slots, const StageInput& in, float fh) {
    GraphicCaps g;
    for (const StageSlot& s : slots) {
        for (const std::string& id : s.tabs.empty() ? std::vector<std::string>{s.id} : s.tabs) {
            StageSlot one = s;
            one.id = id;
            const Box c = panel_content(one, fh, in.titles);
            if (id == "attention") g.heat_side = attention_heat_side(c, fh, in.views);
            if (id == "kv") g.kv_grid = kv_cells_h(c, fh, in.views, in.kv_variants);
            if (id == "time") g.plot = time_plot_h(c, fh, in.views);
        }
    }
    return g;
}

bool holds(const GraphicCaps& g, const GraphicCaps& ref) {
    return g.heat_side + 0.5f >= ref.heat_side && g.kv_grid + 0.5f >= ref.kv_grid &&
           g.plot + 0.5f >= ref.plot;
}

}  // namespace

const char* arrangement_name(Arrangement a) {
    switch (a) {
        case Arrangement::Tiled:
            return "tiled";
        case Arrangement::ColumnTabs:
            return "column-tabs";
        case Arrangement::OneAtATime:
            return "one-at-a-time";
        case Arrangement::Maximised:
            return "maximised";
    }
    return "";
}

float panel_title_h(float fh) {
    return fh * 1.375f;
}
float panel_pad_w(float fh) {
    return fh * 1.0f;
}
float panel_pad_h(float fh) {
    return fh * 0.75f;
}
float frame_row_h(float fh) {
    return fh * (1.375f + 0.3125f);
}

Box content_of(Box slot, float fh, bool title) {
    const float top = (title ? panel_title_h(fh) : 0) + panel_pad_h(fh) * 0.5f;
    return {slot.x + panel_pad_w(fh) * 0.5f, slot.y + top, slot.w - panel_pad_w(fh),
            slot.h - top - panel_pad_h(fh) * 0.5f};
}

HeatmapFrame heatmap_frame(float w, float h, float fh, bool pieces) {
    HeatmapFrame f;
    f.title_h = fh * 1.3f;
    f.top_h = pieces ? std::min(fh * 4.5f, h * 0.2f) : fh * 1.3f;
    f.left_w = pieces ? fh * 5.5f : fh * 2.4f;
    f.side =
        std::max(0.0f, std::min(w - f.left_w - fh * 0.5f, h - f.title_h - f.top_h - fh * 0.5f));
    return f;
}

float small_multiples_w(float content_w, float fh) {
    return std::max(fh * 10.5f, content_w * 0.26f);
}

bool attention_small_multiples(Box c, float fh, int views) {
    // Beside the large heatmaps when the panel is wide, or when they take no size from them
    // (a short panel: the heatmaps' height is what limits them); else the heatmaps alone (the
    // panel shown alone, key 2, has them).
    if (c.w >= fh * 40) return true;
    const float h = c.h - frame_row_h(fh);
    const float with_w = (c.w - small_multiples_w(c.w, fh) - fh * 0.5f) / std::max(views, 1);
    const float without_w = c.w / std::max(views, 1);
    return heatmap_frame(with_w - fh * 0.5f, h, fh, true).side + 0.5f >=
           heatmap_frame(without_w - fh * 0.5f, h, fh, true).side;
}

float attention_heat_side(Box c, float fh, int views) {
    const float h = c.h - frame_row_h(fh);
    const float grid =
        attention_small_multiples(c, fh, views) ? small_multiples_w(c.w, fh) + fh * 0.5f : 0;
    const float main_w = (c.w - grid) / std::max(views, 1);
    return heatmap_frame(main_w - fh * 0.5f, h, fh, true).side;
}

float kv_table_h(float fh, int variants) {
    // The what-if table's title, header and a row per layout, all in view.
    return (variants + 1) * fh * 1.45f + fh * 2.6f;
}

float kv_grids_h(Box c, float fh, int views, int variants) {
    // Above the grids: the layer row and two lines of the cache's shape; below: the bytes plot
    // and the what-if table.
    const float above = frame_row_h(fh) + 2 * fh * 1.3125f;
    const float rest = c.h - above;
    const float table = kv_table_h(fh, variants);
    (void)views;
    // Too short for both: the grids only (maximised, the panel shows the rest too).
    if (rest - table < fh * 5) return std::max(0.0f, rest);
    return std::max(0.0f, rest - std::max(table, rest * 0.36f));
}

float kv_cells_h(Box c, float fh, int views, int variants) {
    const float per = kv_grids_h(c, fh, views, variants) / std::max(views, 1);
    return std::max(0.0f, per - kv_grid_frame_h(fh));
}

float kv_grid_frame_h(float fh) {
    // Each session's grid: its title above, the bar of rows read below, the gap to the next.
    return fh * (1.3f + 0.9f + 0.3f);
}

float time_plot_h(Box c, float fh, int views) {
    // The table (header and a row per session), the log-scale row, then each plot's title above
    // its plot area and the x labels below.
    const float table = (views + 1) * fh * 1.35f + fh * 1.7f;  // and "measured on ..."
    return std::max(0.0f, c.h - table - frame_row_h(fh) - fh * 2.5f);
}

float inside_need_h(float fh, int keys) {
    // The lines it keeps whatever the height (the title, the formula, the stage, two lines of
    // why not Q), the diagram's header, a row per key and the legend; the lines it drops when
    // short (this row's numbers, the shapes: the diagram shows them too) are not counted.
    return fh * (14.0f + 1.35f * std::max(keys, 1));
}

float inside_need_w(float fh, int views) {
    // Key labels, the q rows, K, three columns of numbers, the mask, V and the output, with
    // their gaps (gui/panels/inside_attention.cpp lays them out), per diagram.
    const float one = fh * 32.0f;
    return one * std::max(views, 1) + fh * (std::max(views, 1) - 1);
}

float ops_band_h(float fh) {
    return fh * 9.5f;
}

const StageSlot* StageLayout::find(const std::string& id) const {
    for (const auto& s : slots)
        if (s.id == id) return &s;
    return nullptr;
}

namespace {

StageLayout arrange(const StageInput& in);

}  // namespace

StageLayout layout_stage(const StageInput& in) {
    StageLayout L = arrange(in);
    // What the graphic panels draw: each as large as its panel allows (no cap: a graphic takes
    // the free space), at the text height they draw.
    L.drawn = measure(L.slots, in, in.fh * L.text_zoom);
    return L;
}

bool zooms_alone(const std::string& id) {
    // The attention panel's numbers are in its heatmap's cells, which grow with the cells.
    return id == "tokens" || id == "kv" || id == "time" || id == "next" || id == "toy";
}

float alone_zoom(const StageInput& in, float fh) {
    if (!zooms_alone(in.maximise)) return 1;
    // The panel's place on the stage with every panel open, at the design text height.
    StageInput grid = in;
    grid.maximise.clear();
    grid.focus.clear();
    grid.fh = std::min(fh, kDesignFh);
    const StageLayout g = arrange(grid);
    const Box* tiled = nullptr;
    for (const auto& slot : g.slots)
        if (slot.id == in.maximise ||
            std::find(slot.tabs.begin(), slot.tabs.end(), in.maximise) != slot.tabs.end())
            tiled = &slot.box;
    if (!tiled || tiled->w <= 0 || tiled->h <= 0) return 1;
    const float grows = std::sqrt(in.stage.w * in.stage.h / (tiled->w * tiled->h));
    const float cap_px = std::min(in.stage.w, in.stage.h * 16 / 9) / kAloneLinesAcross;
    return std::max(1.0f, std::min({grows, kAloneMaxZoom, cap_px / fh}));
}

namespace {

// A short stage may not hold the text panels' needs tiled: a slot pushed out of the stage, or
// left no room under its title, does not fit; nor does a KV panel without room for its controls,
// its two lines of shapes and a grid's title and first cells (a tall band under the stage once
// squeezed it to its title bar, its rows drawn over each other), since the reference, measured on
// the same short stage, would then be that nothing.
bool fits(const std::vector<StageSlot>& slots, const StageInput& in, float fh) {
    const float top = in.stage.y, bottom = in.stage.y + in.stage.h;
    return std::all_of(slots.begin(), slots.end(), [&](const StageSlot& sl) {
        const Box c = panel_content(sl, fh, in.titles);
        const bool kv_room = sl.id != "kv" || c.h >= frame_row_h(fh) + fh * (2 * 1.3125f + 3.2f);
        // The tables of the KV, time and next-token panels need their width (the what-if
        // table's four columns, the time table's five).
        bool tables = false;
        for (const std::string& id : sl.tabs.empty() ? std::vector<std::string>{sl.id} : sl.tabs)
            tables = tables || id == "kv" || id == "time" || id == "next";
        const bool wide = !tables || c.w >= fh * 24;
        return sl.box.y >= top - 0.5f && sl.box.y + sl.box.h <= bottom + 0.5f &&
               sl.box.h >= panel_title_h(fh) + fh && kv_room && wide;
    });
}

// Where the inside panel goes: a band across the window under the stage, or a column beside it.
enum class InsidePlace { Band, Column };

// The stage left once the bands (or the inside column) are placed, and their slots. `band_cap`:
// the largest share of the window's height the bands take together.
struct Placed {
    StageInput stage;  // `in` with the stage made smaller
    std::vector<StageSlot> extra;
    bool inside_ok = true;  // the inside panel has what its diagram needs
};

Placed place_bands(const StageInput& in, float fh, InsidePlace where, float band_cap) {
    Placed p{in, {}, true};
    const float gap = 2, ch = chrome_h(fh, in.titles);
    Box& st = p.stage.stage;
    float bottom = st.y + st.h;
    if (in.ops) {
        const float h =
            std::floor(std::min(ops_band_h(fh), st.h * band_cap * (in.inside ? 0.34f : 1)));
        bottom -= h;
        p.extra.push_back({"ops", {st.x, bottom + gap, st.w, h - gap}, {}});
    }
    if (in.inside) {
        // Several diagrams (compare mode) side by side, or one above the other.
        const int k = std::max(in.inside_views, 1);
        const float one_h = inside_need_h(fh, in.inside_keys);
        const float need_h = one_h + ch + gap;
        const float need_w = inside_need_w(fh, k) + panel_pad_w(fh);
        const float stacked_h = one_h * k + fh * (k - 1) + ch + gap;
        const float stacked_w = inside_need_w(fh, 1) + panel_pad_w(fh);
        if (where == InsidePlace::Band) {
            const float room = st.h * band_cap - (st.y + st.h - bottom);
            const bool wide = st.w + 0.5f >= need_w;
            const float want = wide ? need_h : stacked_h;
            const float h = std::ceil(std::max(std::min(want, room), fh * 6));
            p.inside_ok = h + 0.5f >= want && st.w + 0.5f >= (wide ? need_w : stacked_w);
            bottom -= h;
            p.extra.push_back({"inside", {st.x, bottom + gap, st.w, h - gap}, {}});
        } else {
            const float tall = bottom - st.y;
            const bool side = tall + 0.5f < stacked_h;  // not tall enough to stack them
            const float want = side ? need_w : stacked_w;
            const float w = std::ceil(std::min(want, st.w * 0.75f));
            // The stage beside it keeps at least 42% of the window for its own panels (the
            // lesson column's width not counted): narrower, every panel would be a sliver.
            const float lesson_w =
                in.lesson ? std::max((st.w - w) * 0.3f, std::min(fh * 22, (st.w - w) * 0.45f)) : 0;
            p.inside_ok = w + 0.5f >= want && tall + 0.5f >= (side ? need_h : stacked_h) &&
                          st.w - w - lesson_w >= st.w * 0.42f;
            p.extra.push_back({"inside", {st.x + st.w - w, st.y, w, bottom - st.y}, {}});
            st.w -= w + gap;
        }
    }
    st.h = bottom - st.y;
    return p;
}

using Candidate = std::pair<Arrangement, std::vector<StageSlot>>;

std::vector<Candidate> arrangements(const StageInput& in, float fh) {
    return {{Arrangement::Tiled, tiled(in, fh)},
            {Arrangement::ColumnTabs, column_tabs(in, fh)},
            {Arrangement::OneAtATime, one_at_a_time(in, fh)}};
}

// A lesson step's stage: the panels it asks for beside the lesson column (`lesson_w` < 0: the
// column's own width), alone on the stage or each in its column, the bands under them.
std::vector<StageSlot> focus_slots(const StageInput& in, float fh, float lesson_w) {
    const Placed pl = place_bands(in, fh, InsidePlace::Band, 0.55f);
    const StageInput& s = pl.stage;
    const Columns c = columns(s, fh, lesson_w);
    std::vector<StageSlot> slots;
    if (!in.focus_full) {
        // Each asked-for panel gets its column to itself; the rest share the other as tabs.
        slots = column_tabs(s, fh, lesson_w);
        for (StageSlot& sl : slots)
            for (const auto& id : in.focus)
                if (has(sl.tabs, id)) sl.id = id;
    } else {
        const Box main{s.stage.x, s.stage.y, s.lesson ? c.lesson.x - 2 - s.stage.x : s.stage.w,
                       s.stage.h};
        const auto& ids = in.focus;
        const float gap = 2, w = (main.w - gap * (ids.size() - 1)) / ids.size();
        for (std::size_t i = 0; i < ids.size(); ++i)
            slots.push_back({ids[i], {main.x + i * (w + gap), main.y, w, main.h}, {}});
        if (s.lesson) slots.push_back({"lesson", c.lesson, {}});
    }
    slots.insert(slots.end(), pl.extra.begin(), pl.extra.end());
    return slots;
}

// The inside panel under the stage while that leaves the stage most of the window, else in a
// column beside it first (a short stage would leave its graphics small beside empty room).
std::vector<InsidePlace> inside_places(const StageInput& x, float h) {
    const float band = inside_need_h(h, x.inside_keys) + chrome_h(h, x.titles);
    if (!x.inside || band <= x.stage.h * 0.45f)
        return std::vector<InsidePlace>{InsidePlace::Band, InsidePlace::Column};
    return std::vector<InsidePlace>{InsidePlace::Column, InsidePlace::Band};
}

// The stage at the design text height ref_fh, below a toolbar of that text height (the
// toolbar's rows grow with the text), so that it depends on the window and what is open only.
StageInput design_input(const StageInput& in, float ref_fh) {
    StageInput design = in;
    design.fh = ref_fh;
    const float bottom = in.stage.y + in.stage.h;
    design.stage.y = in.stage.y * ref_fh / std::max(in.fh, 1.0f);
    design.stage.h = bottom - design.stage.y;
    return design;
}

// The graphics' sizes at the design text height (ref_fh), below a toolbar of that text height:
// the first arrangement that fits there, the inside panel where it has what it needs if it can
// have it (else the bands' older share of the window).
GraphicCaps reference_caps(const StageInput& in, float ref_fh) {
    GraphicCaps reference;
    const StageInput design = design_input(in, ref_fh);
    bool found = false;
    for (const InsidePlace where : inside_places(design, ref_fh)) {
        if (where == InsidePlace::Column && !design.inside) continue;
        const Placed pl = place_bands(design, ref_fh, where, 0.7f);
        if (!pl.inside_ok) continue;
        for (const auto& [a, slots] : arrangements(pl.stage, ref_fh))
            if (fits(slots, pl.stage, ref_fh)) {
                reference = measure(slots, pl.stage, ref_fh);
                found = true;
                break;
            }
        if (found) break;
    }
    if (!found) {
        const Placed pl = place_bands(design, ref_fh, InsidePlace::Band, 0.55f);
        for (const auto& [a, slots] : arrangements(pl.stage, ref_fh))
            if (!found && fits(slots, pl.stage, ref_fh)) {
                reference = measure(slots, pl.stage, ref_fh);
                found = true;
            }
        if (!found) reference = measure(one_at_a_time(pl.stage, ref_fh), pl.stage, ref_fh);
    }
    return reference;
}

// A lesson's panels beside the lesson text, held to what they draw at the design text height:
// where the lesson column's width at this text would squeeze them, the column takes the widest
// width between that and its design-text width that holds them (its text wraps more), and where
// even the narrower does not hold them, the narrower.
StageLayout arrange_focus(const StageInput& in, float ref_fh) {
    const float fh = in.fh;
    StageLayout L;
    const StageInput design = design_input(in, ref_fh);
    L.reference = measure(focus_slots(design, ref_fh, -1), design, ref_fh);
    L.arrangement = Arrangement::Maximised;
    L.slots = focus_slots(in, fh, -1);
    if (in.lesson && !holds(measure(L.slots, in, fh), L.reference)) {
        // The widest column between the two that still holds them: its prose gets what
        // the panels leave (a larger text wraps less), never their text-1 sizes.
        const float wide = lesson_column_w(in, fh);
        float lo = std::min(wide, lesson_column_w(in, ref_fh)), hi = wide;
        L.slots = focus_slots(in, fh, lo);
        L.squeezed = !holds(measure(L.slots, in, fh), L.reference);
        for (int i = 0; i < 12 && !L.squeezed && hi - lo > 1; ++i) {
            const float mid = std::floor((lo + hi) * 0.5f);
            if (holds(measure(focus_slots(in, fh, mid), in, fh), L.reference))
                lo = mid;
            else
                hi = mid;
        }
        if (!L.squeezed) L.slots = focus_slots(in, fh, lo);
    }
    if (!in.focus_full) L.arrangement = Arrangement::ColumnTabs;
    return L;
}

StageLayout arrange(const StageInput& in) {
    StageLayout L;
    const float fh = in.fh;
    const bool maximise = !in.maximise.empty();
    // The reference: the stage at the design text height, below a toolbar of that text height
    // (the toolbar's rows grow with the text), with the bands at that text height, so that it
    // depends on the window and what is open only. A text smaller than the design's (ImGui's
    // own 13 px font when DejaVu is missing) is its own reference: the promise is only that a
    // larger text never shrinks a graphic.
    const float ref_fh = std::min(fh, kDesignFh);
    L.reference = reference_caps(in, ref_fh);

    if (maximise) {
        // The presenter view: alone in the window (the lesson column's place too). Its graphic's
        // reference is the panel alone in the same window at the design text height: a larger
        // text never draws it smaller there either (the panel moves its text aside instead).
        L.arrangement = Arrangement::Maximised;
        L.slots.push_back({in.maximise, in.stage, {}});
        // Its text grows with the room it has (alone_zoom); the reference is taken at the design
        // text grown the same way.
        L.text_zoom = alone_zoom(in, fh);
        L.reference = measure(L.slots, in, ref_fh * alone_zoom(in, ref_fh));
        return L;
    }
    if (!in.focus.empty()) return arrange_focus(in, ref_fh);

    // The first arrangement that draws every graphic at its reference size and gives the inside
    // panel what it needs: under the stage, then beside it.
    for (const InsidePlace where : inside_places(in, fh)) {
        if (where == InsidePlace::Column && !in.inside) continue;
        const Placed pl = place_bands(in, fh, where, 0.7f);
        if (!pl.inside_ok) continue;
        for (auto& [a, slots] : arrangements(pl.stage, fh)) {
            if (fits(slots, pl.stage, fh) && holds(measure(slots, pl.stage, fh), L.reference)) {
                L.arrangement = a;
                L.slots = std::move(slots);
                L.slots.insert(L.slots.end(), pl.extra.begin(), pl.extra.end());
                L.inside_column = where == InsidePlace::Column;
                return L;
            }
        }
    }
    // Nothing holds both: of the arrangements that fit, the one that keeps the most of what is
    // short (the graphics' reference sizes, the inside panel's height and width).
    L.squeezed = true;
    float best = -1;
    auto share = [](float have, float want) {
        return want > 0 ? std::min(have / want, 1.0f) : 1.0f;
    };
    // The share of the graphic kept least; between arrangements that keep the same least (none
    // of one graphic in either), the one keeping more of the others.
    auto graphics_score = [&](const GraphicCaps& g) {
        const float a = share(g.heat_side, L.reference.heat_side),
                    b = share(g.kv_grid, L.reference.kv_grid), c = share(g.plot, L.reference.plot);
        return std::min({a, b, c}) + 0.01f * (a + b + c) / 3;
    };
    for (const auto& [where, cap] : std::vector<std::pair<InsidePlace, float>>{
             {InsidePlace::Band, 0.55f}, {InsidePlace::Band, 0.7f}, {InsidePlace::Column, 0.7f}}) {
        if (where == InsidePlace::Column && !in.inside) continue;
        const Placed pl = place_bands(in, fh, where, cap);
        for (auto& [a, slots] : arrangements(pl.stage, fh)) {
            if (!fits(slots, pl.stage, fh)) continue;
            const GraphicCaps g = measure(slots, pl.stage, fh);
            float score = graphics_score(g);
            for (const StageSlot& x : pl.extra)
                if (x.id == "inside") {
                    const Box c = content_of(x.box, fh, in.titles);
                    score = std::min({score, share(c.h, inside_need_h(fh, in.inside_keys)),
                                      share(c.w, inside_need_w(fh, in.inside_views))});
                }
            if (score > best + 1e-3f) {
                best = score;
                L.arrangement = a;
                L.slots = slots;
                L.slots.insert(L.slots.end(), pl.extra.begin(), pl.extra.end());
                L.inside_column = where == InsidePlace::Column;
            }
        }
    }
    // With the inside panel open it may instead become a tab of the stage shown one panel at a
    // time, chosen first (a laptop's screen at a large text: the diagram alone wants the window's
    // height, and as a band it leaves the graphics a sliver): each graphic keeps more of its size
    // when shown, and the diagram has the whole stage.
    // Where nothing fits (the tables' width beside a lesson at a large text), that too: the
    // diagram and each graphic get the stage's whole height rather than a band's share of it.
    if (in.inside) {
        StageInput x = in;
        x.inside = false;
        const Placed pl = place_bands(x, fh, InsidePlace::Band, 0.7f);
        std::vector<StageSlot> slots = one_at_a_time(pl.stage, fh);
        slots[0].tabs.insert(slots[0].tabs.begin(), "inside");
        slots[0].id = pick(slots[0].tabs, in.chosen);
        const GraphicCaps g = measure(slots, pl.stage, fh);
        const float score = graphics_score(g);
        if ((best < 0 || fits(slots, pl.stage, fh)) && score > best + 1e-3f) {
            best = score;
            L.arrangement = Arrangement::OneAtATime;
            L.slots = std::move(slots);
            L.slots.insert(L.slots.end(), pl.extra.begin(), pl.extra.end());
            L.inside_column = false;
        }
    }
    if (best < 0) {
        const Placed pl = place_bands(in, fh, InsidePlace::Band, 0.55f);
        L.arrangement = Arrangement::OneAtATime;
        L.slots = one_at_a_time(pl.stage, fh);
        L.slots.insert(L.slots.end(), pl.extra.begin(), pl.extra.end());
    }
    return L;
}

}  // namespace
}  // namespace kvs::gui
