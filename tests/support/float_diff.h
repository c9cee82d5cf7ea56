#pragma once
// Comparing float outputs in tests: the largest absolute difference, and bit-for-bit equality.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace kvs::test {

// max |a[i] - b[i]|; the sizes must match (a mismatch counts as infinitely different)
inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    return worst;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace kvs::test
