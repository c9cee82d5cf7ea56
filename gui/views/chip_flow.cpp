#include "gui/views/chip_flow.h"

#include <algorithm>

namespace kvs::gui {

void reset_chip_flow(ChipFlow& flow, std::uint64_t key, float width, float gap) {
    if (flow.key == key && flow.width == width && flow.gap == gap) return;
    flow = ChipFlow{};
    flow.key = key;
    flow.width = width;
    flow.gap = gap;
}

void add_chip(ChipFlow& flow, float w) {
    if (flow.next_x + w > flow.width && flow.next_x > 0) {
        flow.next_x = 0;
        ++flow.next_line;
    }
    flow.x.push_back(flow.next_x);
    flow.line.push_back(flow.next_line);
    flow.next_x += w + flow.gap;
}

std::pair<int, int> chips_on_lines(const ChipFlow& flow, int n, int line_lo, int line_hi) {
    n = std::clamp(n, 0, static_cast<int>(flow.line.size()));
    const auto b = flow.line.begin();
    const int first = static_cast<int>(std::lower_bound(b, b + n, line_lo) - b);
    const int last = static_cast<int>(std::upper_bound(b, b + n, line_hi) - b);
    return {first, std::max(first, last)};
}

}  // namespace kvs::gui
