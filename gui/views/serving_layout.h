#pragma once
// Where the Serving view (gui/panels/serving.cpp) puts its pieces, a pure function of its content
// box, the text height and the run's counts, testable without a display. Two columns under the
// controls: the block pool's grid over the memory bar at the left; each request's block table,
// the requests' states step by step and the batch's rows per step at the right. The grid's cells
// are never smaller at a larger text than at the design text height (the view then scrolls).
#include <vector>

#include "gui/views/panel_layout.h"

namespace kvs::gui {

struct ServingInput {
    Box content;     // the panel's content area below its controls
    float fh = 16;   // text height in pixels
    int blocks = 1;  // blocks in the pool
    int requests = 1;
    // The whole window: the margins between it and the content (the toolbar, the title bar, the
    // controls, padding, the scrollbar) grow with the text, and at the design text height would
    // be that x design / fh.
    Box window;
    // Each request's block table: its entries at the step shown, and the widest block number's
    // width as drawn (at 0.85 of the text height): every number is drawn, a table wraps onto
    // more lines instead of leaving numbers out.
    std::vector<int> table_lens;
    float number_w = 0;
};

struct ServingLayout {
    float line_h = 0;  // a line of text with its spacing
    Box pool_title;    // a line over the grid
    Box grid;          // the cells: cols x rows, `cell` pixels each
    int cols = 1, rows = 1;
    float cell = 0;
    Box memory;  // the memory lines and bars under the grid
    Box tables;  // one row per request: its name, state and block table
    float table_row_h = 0;
    float table_name_w = 0, table_state_w = 0;  // the name's and the state's columns
    float table_cell_w = 0;                     // an entry of a block table
    int table_per_line = 1;                     // entries on a line of a table
    std::vector<float> table_y;                 // where each request's table starts
    std::vector<int> table_lines;               // and its lines
    Box timeline;  // one row per request, one column per step: its state
    float timeline_row_h = 0;
    Box batch;         // a bar per step: prefill rows and decode rows
    float bottom = 0;  // where the lowest piece ends (beyond content: the view scrolls)
};

ServingLayout layout_serving(const ServingInput& in);

}  // namespace kvs::gui
