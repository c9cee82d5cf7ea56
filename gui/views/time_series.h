#pragma once
// The Time panel's values, one per step of a session, kept between frames: each step's measured
// time, the running total, the counted FLOPs and K/V bytes, the weights' bytes, and the mode that
// did not run counted from the same shapes (Model::count_forward). Extended by the steps that
// came since the last frame, so a frame costs the new steps, not the whole trace; a new
// generation (the traces started over), another model or mode, or fewer steps start it over.
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/model.h"
#include "core/session/trace.h"

namespace kvs::gui {

struct TimeSeries {
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
};

// Brings `t` up to `steps` of a session in `mode` on `model`: recounts only the steps past the
// ones it holds (and the last one it holds, which the engine may still have been filling in).
void update_time_series(TimeSeries& t, std::uint64_t generation, const Model& model, CacheMode mode,
                        std::span<const StepRecord> steps);

}  // namespace kvs::gui
