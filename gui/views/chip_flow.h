#pragma once
// Chips laid out left to right and wrapped at a width, as the token strip draws them: each chip's
// left edge and line, kept between frames and extended by the chips that came since, so a frame
// draws the lines in view without measuring every token before them.
#include <cstdint>
#include <vector>

namespace kvs::gui {

struct ChipFlow {
    std::uint64_t key = 0;  // what the layout was made for (chips, width, font); other: start over
    float width = 0, gap = 0;
    std::vector<float> x;   // [chips] left edge, from the flow's left
    std::vector<int> line;  // [chips] line index, from 0; never decreasing
    float next_x = 0;       // where the next chip goes
    int next_line = 0;
};

// Starts `flow` over for `key` unless it was made for it.
void reset_chip_flow(ChipFlow& flow, std::uint64_t key, float width, float gap);
// Appends a chip `w` wide: on the line while it fits (a line's first chip always does), else on
// the next.
void add_chip(ChipFlow& flow, float w);
// Chips [first, last) of the first `n` on lines [line_lo, line_hi].
std::pair<int, int> chips_on_lines(const ChipFlow& flow, int n, int line_lo, int line_hi);

}  // namespace kvs::gui
