#pragma once
// What a serving run's KV cache cost, counted from the block tables step by step: the pool, its
// peak use, the slots allocated but unused, the blocks shared through a common prefix, and what a
// contiguous cache per request (a context's rows reserved up front) would have held instead.
#include <cstddef>
#include <span>
#include <vector>

namespace kvs {

struct ServeStats {
    int pool_blocks = 0, block_size = 0;
    std::size_t bytes_per_row = 0;  // K and V of one position, every layer
    int context = 0;                // rows a contiguous cache reserves per request
    int peak_blocks = 0;            // most blocks held at once
    int peak_running = 0;           // most requests running at once
    // Summed over steps: rows the held blocks could take, and rows they hold.
    long long slots_allocated = 0, slots_filled = 0;
    int shared_full_blocks = 0;     // full prefix blocks taken from another request
    int shared_partial_blocks = 0;  // partly filled ones (copied before the first write)
    int shared_rows = 0;            // prompt rows not computed again
    int copies_on_write = 0;
    int preemptions = 0;
    int queued_requests = 0;  // requests that waited at least one step for a place or blocks
    int generated = 0;
    double seconds = 0;  // summed step wall times (forward passes and sampling)

    // Unused slots of the held blocks, % of the slots allocated, over every step.
    double fragmentation_percent() const;
    // What contiguous caches for the requests running at the peak would reserve: rows, blocks.
    long long contiguous_rows() const { return (long long)peak_running * context; }
    double contiguous_blocks() const { return double(contiguous_rows()) / block_size; }
    double tokens_per_second() const { return seconds > 0 ? generated / seconds : 0; }
};

// One step's blocks, counted: each distinct block in `tables` once, filled to the most rows any
// holder has in it (`lens[i]`: the rows table i holds). Adds to stats' slot sums.
void count_blocks(ServeStats& stats, std::span<const std::vector<int>* const> tables,
                  std::span<const int> lens);

}  // namespace kvs
