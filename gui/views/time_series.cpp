#include "gui/views/time_series.h"

#include <algorithm>

namespace kvs::gui {

void update_time_series(TimeSeries& t, std::uint64_t generation, const Model& model, CacheMode mode,
                        std::span<const StepRecord> steps) {
    const std::size_t n = steps.size();
    std::size_t from = t.wall.size();
    if (t.generation != generation || t.model != &model || t.mode != mode || n < from) {
        t = TimeSeries{};
        t.generation = generation;
        t.model = &model;
        t.mode = mode;
        from = 0;
    }
    from = from > 0 ? from - 1 : 0;  // the last step held may have been filled in since
    for (auto* v : {&t.positions, &t.wall, &t.total, &t.flops, &t.kv_bytes, &t.weight_bytes,
                    &t.other_flops, &t.other_kv})
        v->resize(from);
    const bool cached = mode == CacheMode::Cached;
    double acc = from > 0 ? t.total[from - 1] : 0;
    for (std::size_t k = from; k < n; ++k) {
        const StepRecord& r = steps[k];
        t.positions.push_back(r.kv.len);
        t.wall.push_back(r.wall_seconds);
        acc += r.wall_seconds;
        t.total.push_back(acc);
        t.flops.push_back(r.counts.flops);
        t.kv_bytes.push_back(r.counts.kv_read_bytes + r.counts.kv_write_bytes);
        t.weight_bytes.push_back(r.counts.weight_bytes);
        // The mode that did not run at the same position: the uncached step at position T reads
        // and writes T rows, the cached one reads T and writes 1; the prefill is the same work.
        const StepCounts c = r.phase == Phase::Prefill ? r.counts
                             : cached                  ? model.count_forward(0, r.kv.len)
                                                       : model.count_forward(r.kv.len - 1, 1);
        t.other_flops.push_back(c.flops);
        t.other_kv.push_back(c.kv_read_bytes + c.kv_write_bytes);
    }
}

}  // namespace kvs::gui
