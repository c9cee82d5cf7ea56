#pragma once
// Small line plots drawn with ImGui's draw list: one value per step for each series, an
// optional log scale, a marker at the step shown, and the values under the mouse.
#include <imgui.h>

#include <span>
#include <string>
#include <vector>

#include "gui/views/layout_record.h"

namespace kvs::gui {

// A series' values are the caller's (a kept series, or a vector alive while the plot is drawn):
// a frame does not copy them.
struct PlotSeries {
    std::string label;
    std::span<const double> y;  // y[x] for x = 0, 1, ...; NaN: no value there
    ImU32 colour = 0;
    bool dashed = false;  // counted only, not run
};

struct PlotOptions {
    const char* title = "";
    bool log_y = false;
    // The scale chosen from the data (gui/views/plot_scale.h) instead of log_y, and the title
    // says which ("..., linear scale").
    bool choose_scale = false;
    int marker_x = -1;                     // vertical line at the step shown
    std::string (*fmt)(double) = nullptr;  // y labels
    const char* x_label = "step";
    std::span<const double> x_values;  // what x means, for labels (e.g. tokens); empty: x itself
    // A label under every x (few points; x_label then only in the tooltip: the title says what x
    // is), else the first and last.
    bool label_every_x = false;
    ImU32 axis = 0, grid = 0, marker = 0, text = 0;
    // Series labels inside the plot's box: top right in the plot area where every label fits
    // there on one line, else in lines of their own over the plot area, each label wrapped to the
    // box's width (never left out).
    bool legend = true;
};

// What draw_plot drew: its box, its scale and where each legend entry went (for the layout
// record).
struct PlotDrawn {
    Rect rect;
    bool log_y = false;
    std::vector<std::pair<std::string, Rect>> legend;
};

// Legend items (a line swatch and the label each), for plots drawn without theirs: on one line
// while they fit in `max_w` (0: the space left in the window), then on the next.
void draw_legend(const std::vector<PlotSeries>& series, ImU32 text, float max_w = 0);

PlotDrawn draw_plot(const char* id, ImVec2 size, const std::vector<PlotSeries>& series,
                    const PlotOptions& o);

}  // namespace kvs::gui
