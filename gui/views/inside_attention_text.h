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

// The stages of one row's arithmetic the panel steps through: q and the K rows, q·k_j, ×1/√d_k,
// the mask, the softmax, ×V, the output.
inline constexpr int kExplainStages = 7;
// The stage whose softmax gives the weights (from 0; the panel says it from 1).
inline constexpr int kSoftmaxStage = 4;
inline constexpr double kStagePlaySeconds = 1.5;

// The stages the panel steps through (kExplainStages): their names in English (for
// tr()), and each stage's shapes in the tutorials' notation, e.g. "[1, 16] · [16, 8] → [1, 8]"
// at a decode step, "[5, 16] · [16, 5] → [5, 5]" at the prefill.
const char* explain_stage_name(int stage);
std::string explain_stage_shape(const AttentionExplain& e, int stage);

// Column headers of the diagram and the shape under each, left to right.
struct ExplainColumn {
    std::string name, shape;
};
std::vector<ExplainColumn> explain_columns(const AttentionExplain& e);

}  // namespace kvs::gui
