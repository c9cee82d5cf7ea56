#pragma once
// What a serving run's KV cache cost, counted from the block tables step by step: the pool, its
// peak use, the slots allocated but unused, the blocks found in the prefix cache, and what a
// contiguous cache per request (a context's rows reserved up front) would have held instead.
#include <array>
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
    // The prefix cache: blocks requests found in it at admission instead of computing them
    // (each block counted once per admission that found it, a preempted request's again too),
    // those blocks' rows, and cached blocks taken for other rows (evicted).
    int cached_blocks_found = 0;
    long long cached_rows = 0;
    long long evictions = 0;
    int preemptions = 0;
    int queued_requests = 0;  // requests that waited at least one step
    // Waiting, by reason (WaitReason: places, budget, blocks, preemption): a request counted once
    // for each step it was still queued after that step's admissions.
    std::array<long long, 4> waits{};
    int generated = 0;
    // Summed step wall times: each whole step, the scheduler's own work (admission, block
    // tables, the prefix cache) with its forward pass and sampling.
    double seconds = 0;

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
