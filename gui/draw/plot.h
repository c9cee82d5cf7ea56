#pragma once
// Small line plots drawn with ImGui's draw list: one value per step for each series, an
// optional log scale, a marker at the step shown, and the values under the mouse.
#include <imgui.h>

#include <string>
#include <vector>

namespace kvs::gui {

struct PlotSeries {
    std::string label;
    std::vector<double> y;  // y[x] for x = 0, 1, ...; NaN: no value there
    ImU32 colour = 0;
    bool dashed = false;  // counted only, not run
};

struct PlotOptions {
    const char* title = "";
    bool log_y = false;
    int marker_x = -1;                     // vertical line at the step shown
    std::string (*fmt)(double) = nullptr;  // y labels
    const char* x_label = "step";
    std::vector<double> x_values;  // what x means, for labels (e.g. tokens); empty: x itself
    // A label under every x (few points; x_label then only in the tooltip: the title says what x
    // is), else the first and last.
    bool label_every_x = false;
    ImU32 axis = 0, grid = 0, marker = 0, text = 0;
    bool legend = true;  // series labels inside the plot
};

// Legend items (a line swatch and the label each), for plots drawn without theirs: on one line
// while they fit in `max_w` (0: the space left in the window), then on the next.
void draw_legend(const std::vector<PlotSeries>& series, ImU32 text, float max_w = 0);

void draw_plot(const char* id, ImVec2 size, const std::vector<PlotSeries>& series,
               const PlotOptions& o);

}  // namespace kvs::gui
