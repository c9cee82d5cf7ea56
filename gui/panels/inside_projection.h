#pragma once
// Inside attention's first stages (gui/panels/inside_attention.cpp steps through them): where the
// row's q, k and v come from at its layer and head, before the scores:
//   x [1, dim] → norm → x_norm [1, dim] → · W_qᵀ, W_kᵀ, W_vᵀ [dim, d_k] → q, k, v [1, d_k]
//   → RoPE turns q and k (their lengths kept) → k and v written as the token's row of the cache.
// Every number is core's: ProjectionExplain (core/session/projection_explain.h) for the vectors,
// lengths and angles, weight_strip (core/model/weight_strip.h) for the matrix rows, the K/V rows'
// sources from kv_source_of (core/session/attention_explain.h). Nothing here multiplies them.
#include <optional>
#include <string>
#include <vector>

#include "core/model/weight_strip.h"
#include "core/session/projection_explain.h"
#include "gui/draw/frame_context.h"

namespace kvs::gui {

// The weight strip the panel shows, kept between frames (building it reads d_k × dim weights).
struct WeightStripCache {
    const Model* model = nullptr;
    int kind = -1, layer = -1, head = -1, cols = 0;
    std::optional<WeightStrip> strip;
    std::string why;
};

// What a projection stage draws for one row.
struct ProjectionInput {
    std::optional<ProjectionExplain> pe;
    std::string why;                      // why there is no pe (the toy, a fused pass, ...)
    const WeightStrip* strip = nullptr;   // the stage's matrix rows (x·W stages), if any
    std::string strip_why;                // why there is none (a replay, the toy)
    std::vector<KvSource> sources;        // [keys read]: where each K/V row came from
    std::vector<std::string> key_labels;  // [keys read]: its position and token
};

// Draws projection stage p (0 .. kProjectionStages - 1) in the box (o, size): its numbers at
// the text size, grown up to `max_zoom` times it while the stage still fits the box. Returns the
// height drawn; records what it drew in `record` (may be null).
float draw_projection_stage(FrameContext& f, const ProjectionInput& in, int p, ImVec2 o,
                            ImVec2 size, float max_zoom, ProjectionRecord* record);
// The least height stage p takes `width` wide at the text size.
float projection_stage_need(FrameContext& f, const ProjectionInput& in, int p, float width);
// The matrix whose rows stage p draws (wq, wk, wv), or nullopt for a stage without one.
std::optional<MatrixKind> projection_stage_matrix(int p);
// The strip of `kind` for (layer, head), `cols` cells a row, from `c` when it holds it.
const WeightStrip* cached_weight_strip(WeightStripCache& c, const Model& m, MatrixKind kind,
                                       int layer, int head, int cols, std::string* why);

}  // namespace kvs::gui
