#pragma once
// The map of a step (gui/panels/step_map.cpp) as drawn: core's step_map
// (core/session/step_map.h) as a column per layer, the new token's path across them, and under
// each, with the cache and without it, the query rows the layer computes and needs and the K/V
// rows it reads, recomputes and writes. Texts and places only, tested headless: every count is a
// field of the map.
#include <string>
#include <vector>

#include "core/session/step_map.h"

namespace kvs::gui {

// One line of the map: its label at the left and a cell per layer.
struct MapLine {
    std::string label;
    std::vector<std::string> cells;  // [n_layers]
    bool emphasis = false;           // the queries needed: the why-not-Q chain
};

// One way of running the step: its title and lines.
struct MapWay {
    std::string title;
    bool ran = false;      // the way the step ran (else counted from the same shapes)
    bool possible = true;  // false: the cached way without the causal mask
    std::vector<MapLine> lines;
};

struct StepMapView {
    std::string title;               // the step, what the cache held and which tokens joined
    std::vector<std::string> heads;  // [n_layers] "layer 0", ...
    MapWay cached, uncached;
    std::string note;  // why the last layer needs only the newest query
};

// `token`: the newest token's piece as the window labels it.
StepMapView step_map_view(const StepMap& m, const std::string& token);

// Positions a run of token indexes covers, from 1: "7", "1-6", "none".
std::string run_text(const RowRun& r);

// Where the map's columns go in a content box `w` wide from x = 0: the label column, then a
// column per layer at least `min_col_w` wide (wider when the box has room). Clicks find a layer.
struct MapColumns {
    float label_w = 0, col_w = 0;
    int n = 0;
    float x_of(int layer) const { return label_w + layer * col_w; }
    float width() const { return label_w + n * col_w; }
    // The layer whose column holds x, or -1.
    int layer_at(float x) const;
};
MapColumns map_columns(int n_layers, float w, float label_w, float min_col_w);

}  // namespace kvs::gui
