#include "gui/stage_layout.h"

#include <algorithm>
#include <cmath>

namespace kvs::gui {
namespace {

// The text height of the reference stage: text scale 1 (the 16 px font). Its graphics are the
// sizes no larger text may undercut; beyond it the stage shows fewer panels at once.
constexpr float kDesignFh = 16.0f;

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

Columns columns(const StageInput& in, float fh) {
    const Box& s = in.stage;
    const float gap = 2;
    const float lesson_w =
        in.lesson ? std::floor(std::max(s.w * 0.3f, std::min(fh * 22, s.w * 0.45f))) : 0;
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

std::vector<StageSlot> column_tabs(const StageInput& in, float fh) {
    const Columns c = columns(in, fh);
    std::vector<std::string> left = {"attention", "tokens"};
    if (in.toy) left.push_back("toy");
    const std::vector<std::string> right = {"kv", "time", "next"};
    std::vector<StageSlot> out = {{pick(left, in.chosen), c.left, left},
                                  {pick(right, in.chosen), c.right, right}};
    if (in.lesson) out.push_back({"lesson", c.lesson, {}});
    return out;
}

std::vector<StageSlot> one_at_a_time(const StageInput& in, float fh) {
    const Columns c = columns(in, fh);
    std::vector<std::string> all = {"attention", "kv", "time", "next", "tokens"};
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

float attention_heat_side(Box c, float fh, int views) {
    const float h = c.h - frame_row_h(fh);
    const float main_w = (c.w - small_multiples_w(c.w, fh) - fh * 0.5f) / std::max(views, 1);
    return heatmap_frame(main_w - fh * 0.5f, h, fh, true).side;
}

float kv_grids_h(Box c, float fh, int views, int variants) {
    // Above the grids: the layer row and two lines of the cache's shape; below: the bytes plot
    // and the what-if table (a header and a row per layout, all in view).
    const float above = frame_row_h(fh) + 2 * fh * 1.3125f;
    const float rest = c.h - above;
    const float table = (variants + 1) * fh * 1.45f + fh * 2.6f;
    (void)views;
    // Too short for both: the grids only (maximised, the panel shows the rest too).
    if (rest - table < fh * 5) return std::max(0.0f, rest);
    return std::max(0.0f, rest - std::max(table, rest * 0.36f));
}

float kv_cells_h(Box c, float fh, int views, int variants) {
    // Each session's grid: its title above, the bar of rows read below.
    const float per = kv_grids_h(c, fh, views, variants) / std::max(views, 1);
    return std::max(0.0f, per - fh * 1.3f - fh * 0.9f);
}

float time_plot_h(Box c, float fh, int views) {
    // The table (header and a row per session), the log-scale row, then each plot's title above
    // its plot area and the x labels below.
    const float table = (views + 1) * fh * 1.35f + fh * 1.7f;  // and "measured on ..."
    return std::max(0.0f, c.h - table - frame_row_h(fh) - fh * 2.5f);
}

const StageSlot* StageLayout::find(const std::string& id) const {
    for (const auto& s : slots)
        if (s.id == id) return &s;
    return nullptr;
}

namespace {

GraphicCaps capped(GraphicCaps g, const GraphicCaps& caps) {
    if (caps.heat_side > 0) g.heat_side = std::min(g.heat_side, caps.heat_side);
    if (caps.kv_grid > 0) g.kv_grid = std::min(g.kv_grid, caps.kv_grid);
    if (caps.plot > 0) g.plot = std::min(g.plot, caps.plot);
    return g;
}

StageLayout arrange(const StageInput& in);

}  // namespace

StageLayout layout_stage(const StageInput& in) {
    StageLayout L = arrange(in);
    L.drawn = capped(measure(L.slots, in, in.fh), L.caps);
    return L;
}

namespace {

// A short stage (bands under it: the op strip, inside attention) may not hold the text panels'
// needs tiled: a slot pushed out of the stage, or left no room under its title, does not fit;
// nor does a KV panel without room for its controls, its two lines of shapes and a grid's title
// and first cells (the inside-attention band at 1920x1080 squeezed it to its title bar, its rows
// drawn over each other), since the reference, measured on the same short stage, would then be
// that nothing.
bool fits(const std::vector<StageSlot>& slots, const StageInput& in, float fh) {
    const float top = in.stage.y, bottom = in.stage.y + in.stage.h;
    return std::all_of(slots.begin(), slots.end(), [&](const StageSlot& sl) {
        const bool kv_room = sl.id != "kv" || panel_content(sl, fh, in.titles).h >=
                                                  frame_row_h(fh) + fh * (2 * 1.3125f + 3.2f);
        return sl.box.y >= top - 0.5f && sl.box.y + sl.box.h <= bottom + 0.5f &&
               sl.box.h >= panel_title_h(fh) + fh && kv_room;
    });
}

StageLayout arrange(const StageInput& in) {
    StageLayout L;
    const float fh = in.fh;
    // The reference: the tiled stage at the design text height, below a toolbar of that text
    // height (the toolbar's rows grow with the text), so that it depends on the window only.
    // A text smaller than the design's (ImGui's own 13 px font when DejaVu is missing) is its
    // own reference: the promise is only that a larger text never shrinks a graphic.
    const float ref_fh = std::min(fh, kDesignFh);
    StageInput design = in;
    design.fh = ref_fh;
    const float bottom = in.stage.y + in.stage.h;
    design.stage.y = in.stage.y * ref_fh / std::max(fh, 1.0f);
    design.stage.h = bottom - design.stage.y;
    // The first arrangement that fits the stage at that text height (a short stage: tabs).
    std::vector<StageSlot> ref = tiled(design, ref_fh);
    if (!fits(ref, design, ref_fh)) ref = column_tabs(design, ref_fh);
    if (!fits(ref, design, ref_fh)) ref = one_at_a_time(design, ref_fh);
    L.reference = measure(ref, design, ref_fh);

    const bool maximise = !in.maximise.empty();
    if (maximise || !in.focus.empty()) {
        // Alone on the stage (a maximised panel takes the lesson column's place too), or a
        // lesson's panels side by side beside the lesson text.
        L.arrangement = Arrangement::Maximised;
        const Columns c = columns(in, fh);
        const bool lesson_col = in.lesson && !maximise;
        Box main{in.stage.x, in.stage.y, lesson_col ? c.lesson.x - 2 - in.stage.x : in.stage.w,
                 in.stage.h};
        std::vector<std::string> ids = maximise ? std::vector<std::string>{in.maximise} : in.focus;
        if (!maximise && !in.focus_full) {
            // Each asked-for panel gets its column to itself; the rest share the other as tabs.
            std::vector<StageSlot> slots = column_tabs(in, fh);
            for (StageSlot& s : slots)
                for (const auto& id : ids)
                    if (has(s.tabs, id)) s.id = id;
            L.slots = slots;
            L.arrangement = Arrangement::ColumnTabs;
            return L;
        }
        const float gap = 2, w = (main.w - gap * (ids.size() - 1)) / ids.size();
        for (std::size_t i = 0; i < ids.size(); ++i)
            L.slots.push_back({ids[i], {main.x + i * (w + gap), main.y, w, main.h}, {}});
        if (lesson_col) L.slots.push_back({"lesson", c.lesson, {}});
        return L;
    }

    // The first arrangement that draws every graphic at its reference size.
    const std::pair<Arrangement, std::vector<StageSlot>> candidates[] = {
        {Arrangement::Tiled, tiled(in, fh)},
        {Arrangement::ColumnTabs, column_tabs(in, fh)},
        {Arrangement::OneAtATime, one_at_a_time(in, fh)}};
    for (const auto& [a, slots] : candidates) {
        if (fits(slots, in, fh) && holds(measure(slots, in, fh), L.reference)) {
            L.arrangement = a;
            L.slots = slots;
            L.caps = L.reference;
            return L;
        }
    }
    // Text too large for even one panel at the reference size: one at a time, the graphics
    // that can at their reference size, the others as large as fits.
    L.arrangement = Arrangement::OneAtATime;
    L.slots = candidates[2].second;
    L.caps = L.reference;
    L.squeezed = true;
    return L;
}

}  // namespace
}  // namespace kvs::gui
