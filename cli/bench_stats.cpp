#include "cli/bench_stats.h"

#include <algorithm>
#include <cmath>

#include "core/util/error.h"

namespace kvs::cli {

Spread spread(std::vector<double> values) {
    if (values.empty()) throw Error("no timings to summarize");
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
    return {values.front(), median, values.back()};
}

PowerFit fit_power(const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size() || x.size() < 2)
        throw Error("a power-law fit needs at least two (length, time) points");
    const double n = static_cast<double>(x.size());
    double sx = 0, sy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] > 0) || !(y[i] > 0)) throw Error("a power-law fit needs positive values");
        sx += std::log(x[i]);
        sy += std::log(y[i]);
    }
    const double mx = sx / n, my = sy / n;
    double sxx = 0, sxy = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double dx = std::log(x[i]) - mx, dy = std::log(y[i]) - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (sxx == 0) throw Error("a power-law fit needs at least two different lengths");
    PowerFit f;
    f.exponent = sxy / sxx;
    f.r2 = syy > 0 ? sxy * sxy / (sxx * syy) : 1.0;
    f.points = static_cast<int>(x.size());
    return f;
}

}  // namespace kvs::cli
