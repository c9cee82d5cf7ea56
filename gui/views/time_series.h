#pragma once
// The Time panel's values, one per step of a session, kept between frames: each step's measured
// time, the running totals (wall, FLOPs, decode time) its table reads, the counted FLOPs and K/V
// bytes, the weights' bytes, and the mode that did not run counted from the same shapes
// (Model::count_forward). Extended by the steps that came since the last frame, so a frame costs
// the new steps, not the whole trace; a new generation (the traces started over), another model or
// mode, or fewer steps start it over.
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/model.h"
#include "core/session/trace.h"

namespace kvs::gui {

struct TimeSeries {
    std::uint64_t epoch = 0;  // how many times it started over: series of one epoch only grow
    std::uint64_t generation = 0;
    const Model* model = nullptr;
    CacheMode mode = CacheMode::Cached;
    // [steps] each
    std::vector<double> positions;     // the cache length the step reached
    std::vector<double> wall;          // measured wall time of the step
    std::vector<double> total;         // running sum of wall
    std::vector<double> flops;         // counted FLOPs of the step
    std::vector<double> kv_bytes;      // K/V read and written by the step (counted)
    std::vector<double> weight_bytes;  // weights read by the step (counted)
    std::vector<double> other_flops;   // the other mode's FLOPs at the same position (counted)
    std::vector<double> other_kv;      // the other mode's K/V read and written (counted)
    // Running over steps 0..k, for the table of the step shown: counted FLOPs, the decode steps'
    // wall time and how many there were, the newest prefill's wall time (NaN: none yet).
    std::vector<double> flops_total;
    std::vector<double> decode_total;
    std::vector<int> decode_steps;
    std::vector<double> first_token;
    // The KV cache's bytes after the step, and the same model's as MQA (1 K/V head) and MHA (a
    // K/V head per query head) at the same length (counted from the shapes: kv_bytes_per_token).
    std::vector<double> cache_bytes, mqa_bytes, mha_bytes;
};

// Brings `t` up to `steps` of a session in `mode` on `model`: recounts only the steps past the
// ones it holds (and the last one it holds, which the engine may still have been filling in).
void update_time_series(TimeSeries& t, std::uint64_t generation, const Model& model, CacheMode mode,
                        std::span<const StepRecord> steps);

// Whether two sessions' K/V bytes series are equal (the bidirectional view's two uncached
// sessions move the same bytes: the later line is drawn dashed), kept between frames: `agree` is
// how far they were equal when last asked, so a frame compares only the steps past it.
struct SeriesAgreement {
    std::uint64_t epoch_a = ~0ull, epoch_b = ~0ull;
    std::size_t agree = 0;
};
bool same_kv_bytes(SeriesAgreement& m, const TimeSeries& a, const TimeSeries& b);

}  // namespace kvs::gui
