#pragma once
// What the "Inside attention" panel (gui/panels/inside_attention.cpp) writes, without a display:
// the numbers as the panel prints them,
// the formula with this row's numbers and the shapes in the tutorials' notation. The numbers
// all come from an AttentionExplain (core/session/attention_explain.h); nothing here does model
// math.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/session/attention_explain.h"
#include "core/session/projection_explain.h"
#include "core/session/trace.h"

namespace kvs::gui {

// A number as the panel prints it: 4 significant digits, "−∞" / "+∞" for infinities.
std::string fmt_number(float v);
// "[a, b, c]"; longer than `max_items`: the first and last few around " … ".
std::string fmt_vector(std::span<const float> v, int max_items = 8);

// The formula as the tutorials write it.
inline constexpr const char* kAttentionFormula = "softmax(q·Kᵀ/√d_k + mask)·V";

// The lines the panel writes above its diagram, in the window's language (tr()):
//   numbers:  this row's formula with its numbers (scores, 1/√d_k, weights, output)
//   scores:   "q [1, d_k] · Kᵀ [d_k, T] → scores [1, T]" (prefill: Q [T, d_k] ... [T, T])
//   output:   "weights [1, T] · V [T, d_v] → output [1, d_v]"
//   gqa:      which query heads share this K/V head (empty without grouped-query attention)
//   scale:    "×1/√d_k = 1/√64 = 0.125"
struct ExplainLines {
    std::string numbers, scores, output, gqa, scale;
    // `numbers` in the pieces a narrow panel may wrap between: "= softmax(... + mask)·V",
    // "= [weights]·V", "= [output]".
    std::vector<std::string> number_parts;
};
ExplainLines explain_lines(const AttentionExplain& e);

// This row's numbers as far as stage `stage` has computed them (-1: every stage, the pieces of
// ExplainLines::number_parts): nothing at stage 0 (q and K), then "q·Kᵀ = [scores]", the scaling,
// the mask, the softmax's weights, ·V and the output, each stage adding its piece. A build that
// reveals in order: no stage shows a number a later one computes.
std::vector<std::string> explain_number_parts(const AttentionExplain& e, int stage);

// Why a stage changes nothing this row shows, in the window's language; empty where it does. The
// mask at a decode step (every key comes before the newest query) and without the causal mask.
std::string explain_stage_note(const AttentionExplain& e, int stage);

// The panel's stages, from 0: first where q, k and v come from (kProjectionStages: the layer's
// input x, the norm, x·W_q → q, x·W_k → k, x·W_v → v, RoPE, the K/V row written to the cache),
// then the row's arithmetic (kAttentionStages: q and the K rows, q·k_j, ×1/√d_k, the mask, the
// softmax, ×V, the output). The functions below that take a `stage` of the arithmetic count it
// from its own 0 (attention_stage()).
inline constexpr int kProjectionStages = 7;
inline constexpr int kAttentionStages = 7;
inline constexpr int kExplainStages = kProjectionStages + kAttentionStages;
// The stage whose softmax gives the weights (from 0; the panel says it from 1).
inline constexpr int kSoftmaxStage = kProjectionStages + 4;
inline constexpr double kStagePlaySeconds = 1.5;
// A panel stage (-1: every stage of the arithmetic at once) as a stage of the arithmetic: -1 for
// all, else stage - kProjectionStages (negative for a projection stage).
inline constexpr int attention_stage(int stage) {
    return stage < 0 ? -1 : stage - kProjectionStages;
}
inline constexpr bool is_projection_stage(int stage) {
    return stage >= 0 && stage < kProjectionStages;
}

// The stages of the arithmetic (kAttentionStages): their names in English (for
// tr()), and each stage's shapes in the tutorials' notation, e.g. "[1, 16] · [16, 8] → [1, 8]"
// at a decode step, "[5, 16] · [16, 5] → [5, 5]" at the prefill.
const char* explain_stage_name(int stage);
std::string explain_stage_shape(const AttentionExplain& e, int stage);

// Column headers of the diagram and the shape under each, left to right.
struct ExplainColumn {
    std::string name, shape;
};
std::vector<ExplainColumn> explain_columns(const AttentionExplain& e);

// The projection stages (0 .. kProjectionStages - 1): their names in English (for tr()), and
// each one's shapes in the tutorials' notation, from the row's sizes: "[1, 128]" for x,
// "[1, 128] · [128, 16] → [1, 16]" for x·W_qᵀ, "[1, 16] → [1, 16]" for RoPE.
const char* projection_stage_name(int p);
std::string projection_stage_shape(const ProjectionExplain& pe, int p);
// "q = [1.755, 0.5617, …]": a vector as the stage's numbers line writes it (every value where
// there are at most `max_items`).
std::string projection_numbers(const char* name, const std::vector<float>& v, int max_items);

}  // namespace kvs::gui
