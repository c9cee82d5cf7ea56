#pragma once
// kvscope-cli explain's parts before and after the attention row, each read from the engine's
// record of the step: where q, k and v came from (core/session/projection_explain.h, the weight
// strips of core/model/weight_strip.h), the step through every layer (core/session/step_map.h),
// and the next-token choice as stages (core/session/sampling_stages.h). As text, or as members of
// explain's JSON object.
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/session/projection_explain.h"
#include "core/session/step_map.h"
#include "core/util/json_writer.h"

namespace kvs::cli {

// Cells a weight strip's row has at most in explain's JSON.
inline constexpr int kStripColumns = 64;

void print_projection_text(const ProjectionExplain& p, const Model& m, const std::vector<int>& seq);
void print_map_text(const StepMap& map, const std::vector<int>& seq, const Model& m);
void print_sampling_text(const StepRecord& r, const Model& m);

// "projection": the stages, or null with "projection_missing": why; "weights": W_q, W_k, W_v
// strips of the head (kStripColumns wide), where the model keeps weights.
void write_projection_json(JsonWriter& j, const std::optional<ProjectionExplain>& p,
                           const std::string& why, const Model& m);
void write_map_json(JsonWriter& j, const StepMap& map);
void write_sampling_json(JsonWriter& j, const StepRecord& r, const Model& m);

}  // namespace kvs::cli
