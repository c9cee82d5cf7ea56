#include "gui/views/time_series.h"

#include <algorithm>
#include <cmath>

#include "core/model/kv_what_if.h"

namespace kvs::gui {

void update_time_series(TimeSeries& t, std::uint64_t generation, const Model& model, CacheMode mode,
                        std::span<const StepRecord> steps) {
    const std::size_t n = steps.size();
    std::size_t from = t.wall.size();
    if (t.generation != generation || t.model != &model || t.mode != mode || n < from) {
        const std::uint64_t epoch = t.epoch + 1;
        t = TimeSeries{};
        t.epoch = epoch;
        t.generation = generation;
        t.model = &model;
        t.mode = mode;
        from = 0;
    }
    from = from > 0 ? from - 1 : 0;  // the last step held may have been filled in since
    for (auto* v : {&t.positions, &t.wall, &t.total, &t.flops, &t.kv_bytes, &t.weight_bytes,
                    &t.other_flops, &t.other_kv, &t.flops_total, &t.decode_total, &t.first_token,
                    &t.cache_bytes, &t.mqa_bytes, &t.mha_bytes})
        v->resize(from);
    t.decode_steps.resize(from);
    const bool cached = mode == CacheMode::Cached;
    const ModelConfig& config = model.config();
    const double mqa = double(kv_bytes_per_token(config, 1));
    const double mha = double(kv_bytes_per_token(config, config.n_heads));
    double acc = from > 0 ? t.total[from - 1] : 0;
    double flops = from > 0 ? t.flops_total[from - 1] : 0;
    double decode = from > 0 ? t.decode_total[from - 1] : 0;
    int n_decode = from > 0 ? t.decode_steps[from - 1] : 0;
    double ttft = from > 0 ? t.first_token[from - 1] : NAN;
    for (std::size_t k = from; k < n; ++k) {
        const StepRecord& r = steps[k];
        t.positions.push_back(r.kv.len);
        t.wall.push_back(r.wall_seconds);
        acc += r.wall_seconds;
        t.total.push_back(acc);
        t.flops.push_back(r.counts.flops);
        flops += r.counts.flops;
        t.flops_total.push_back(flops);
        if (r.phase == Phase::Prefill) {
            ttft = r.wall_seconds;
        } else {
            decode += r.wall_seconds;
            ++n_decode;
        }
        t.decode_total.push_back(decode);
        t.decode_steps.push_back(n_decode);
        t.first_token.push_back(ttft);
        t.cache_bytes.push_back(double(r.kv.bytes()));
        t.mqa_bytes.push_back(mqa * r.kv.len);
        t.mha_bytes.push_back(mha * r.kv.len);
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

bool same_kv_bytes(SeriesAgreement& m, const TimeSeries& a, const TimeSeries& b) {
    if (m.epoch_a != a.epoch || m.epoch_b != b.epoch) m = {a.epoch, b.epoch, 0};
    // Within an epoch only each series' last value may change (update_time_series reads its last
    // step again), and that is at or past agree - 1: the values before it were compared already.
    const std::size_t n = std::min(a.kv_bytes.size(), b.kv_bytes.size());
    std::size_t k = std::min(m.agree > 0 ? m.agree - 1 : 0, n);
    while (k < n && a.kv_bytes[k] == b.kv_bytes[k]) ++k;
    m.agree = k;
    return a.kv_bytes.size() == b.kv_bytes.size() && k == n;
}

}  // namespace kvs::gui
