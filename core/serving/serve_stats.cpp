#include "core/serving/serve_stats.h"

#include <algorithm>

namespace kvs {

double ServeStats::fragmentation_percent() const {
    return slots_allocated > 0 ? 100.0 * double(slots_allocated - slots_filled) / slots_allocated
                               : 0.0;
}

void count_blocks(ServeStats& stats, std::span<const std::vector<int>* const> tables,
                  std::span<const int> lens) {
    // Each distinct block once, filled to the most rows any holder has in it.
    std::vector<int> filled(stats.pool_blocks, -1);
    int held = 0;
    for (std::size_t i = 0; i < tables.size(); ++i) {
        const std::vector<int>& t = *tables[i];
        for (std::size_t b = 0; b < t.size(); ++b) {
            if (t[b] < 0) continue;  // let go under a window
            const int rows = std::clamp(lens[i] - int(b) * stats.block_size, 0, stats.block_size);
            int& f = filled.at(t[b]);
            if (f < 0) ++held;
            f = std::max(f, rows);
        }
    }
    stats.peak_blocks = std::max(stats.peak_blocks, held);
    for (int f : filled)
        if (f >= 0) {
            stats.slots_allocated += stats.block_size;
            stats.slots_filled += f;
        }
}

}  // namespace kvs
