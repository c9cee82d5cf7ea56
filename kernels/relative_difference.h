#pragma once
// How far an op's output is from the reference's, in one number: max |x - ref| / max |ref| (the
// error relative to the size of the reference tensor; max |x - ref| when ref is all zeros).
// Infinite when the sizes differ or a cell is NaN on one side only. Used by `kvscope-cli kernels`
// and the kernel tests.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kvs {

inline double relative_difference(const std::vector<float>& x, const std::vector<float>& ref) {
    if (x.size() != ref.size()) return std::numeric_limits<double>::infinity();
    double diff = 0, largest = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        if (std::isnan(x[i]) != std::isnan(ref[i])) return std::numeric_limits<double>::infinity();
        diff = std::max(diff, double(std::fabs(x[i] - ref[i])));
        largest = std::max(largest, double(std::fabs(ref[i])));
    }
    return largest > 0 ? diff / largest : diff;
}

}  // namespace kvs
