#pragma once
// The loaded model's weights in other types, measured: as stored (a quantised GGUF's own types),
// then f32, f16, q8_0 and q4_k (as the window's weight-types panel lists them), the same model
// with every matrix kept in that type
// (core/model/compact_weights.h: the model's own types where it has them, converted otherwise), the
// bytes of weights one decode token reads (counted from shapes) and its cached decode speed on
// the backend (measured: the median of a few timed steps after a short prompt). Their product is
// the read rate the decode reached, to set beside the machine's measured read bandwidth: a decode
// step reads every weight once, so fewer bytes a weight, more tokens a second, up to the
// arithmetic that turns those bytes into products.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/model/backend.h"
#include "core/model/compact_weights.h"
#include "core/model/transformer_model.h"

namespace kvs {

struct WeightTypeRun {
    WeightsWanted asked;  // the type asked for; none: as the model keeps them
    std::string kept;     // what the matrices are kept as ("Q4_K x 72, Q6_K x 13")
    std::uint64_t bytes_per_token = 0;
    double step_seconds = 0;  // median of `steps` decode steps; 0 when not measured
    int steps = 0;
    std::string not_run;  // why it was not measured (does not fit in memory), else empty
    double tokens_per_second() const { return step_seconds > 0 ? 1 / step_seconds : 0; }
    double bytes_per_second() const { return double(bytes_per_token) * tokens_per_second(); }
};

// The rows of the panel for `m`, in order: as stored (only for a model kept compact), f32, f16,
// q8_0, q4_k.
std::vector<WeightsWanted> panel_weight_types(const TransformerModel& m);

// Each type of `types` in turn (built, measured, let go). `between` runs before each type and each
// timed step: the caller throws from it to cancel. Throws kvs::Error for a model with no matrices
// to convert (GPT-2 runs float32 only).
std::vector<WeightTypeRun> measure_weight_types(const TransformerModel& m, Backend& be,
                                                const std::vector<WeightsWanted>& types,
                                                int steps = 8,
                                                const std::function<void()>& between = {});

}  // namespace kvs
