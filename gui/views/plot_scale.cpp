#include "gui/views/plot_scale.h"

#include <algorithm>
#include <cmath>

namespace kvs::gui {

bool choose_log_y(const std::vector<std::span<const double>>& series) {
    double lo = INFINITY, hi = 0;
    for (std::span<const double> ys : series)
        for (double v : ys)
            if (std::isfinite(v) && v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    return std::isfinite(lo) && hi / lo > kLogSpan;
}

}  // namespace kvs::gui
