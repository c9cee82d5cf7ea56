#pragma once
// Small statistics for `kvscope-cli bench`: the spread of repeated timings, and the exponent of a
// power law fitted to (length, time) points.
#include <vector>

namespace kvs::cli {

struct Spread {
    double min = 0, median = 0, max = 0;
};
// Throws kvs::Error for an empty list. The median of an even count is the mean of the middle two.
Spread spread(std::vector<double> values);

// y ~ c * x^k by least squares on (log x, log y); r2 is the fit's coefficient of determination.
struct PowerFit {
    double exponent = 0, r2 = 0;
    int points = 0;
};
// Needs at least two points with distinct positive x and positive y; throws kvs::Error otherwise.
PowerFit fit_power(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace kvs::cli
