#pragma once
// A plot's y scale chosen from its data, without a display: linear where it shows the lines'
// gaps as the distances they are (a 128x gap puts the smaller line near the floor, the larger at
// the top), log only where the values span more than kLogSpan, where a linear axis would press
// every line but the largest onto the floor.
#include <span>
#include <vector>

namespace kvs::gui {

inline constexpr double kLogSpan = 1000;  // three decades

// Whether to draw the series' values (NaN and values <= 0 ignored) on a log scale.
bool choose_log_y(const std::vector<std::span<const double>>& series);

}  // namespace kvs::gui
