#include "core/util/closest_name.h"

#include <algorithm>

namespace kvs {

std::size_t edit_distance(const std::string& a, const std::string& b) {
    // d[i][j]: edits from a's first i bytes to b's first j, three rows kept (a swap looks back
    // two).
    std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                cur[j] = std::min(cur[j], before[j - 2] + 1);
        }
        std::swap(before, prev);
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates,
                         std::size_t max_distance) {
    std::string best;
    std::size_t best_d = max_distance + 1;
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (d < best_d) {
            best = c;
            best_d = d;
        }
    }
    return best;
}

}  // namespace kvs
