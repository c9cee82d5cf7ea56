#pragma once
// The Next token panel's sampling stages as drawn (gui/panels/next_token.cpp): core's
// sampling_stages (core/session/sampling_stages.h) laid out as the attention row is, one column
// per stage (logit, ÷ temperature, softmax at the temperature, top-k, top-p: the distribution
// the draw indexes), a row per token, the rest's mass under each column, and the draw as a strip
// of the final distribution's cumulative mass with the coin marked. Every number is a field of
// the stages; nothing here computes a probability.
#include <string>
#include <vector>

#include "core/session/sampling_stages.h"

namespace kvs::gui {

enum class SamplingColumnKind { Logit, Scaled, Tempered, TopK, Final };

struct SamplingColumn {
    SamplingColumnKind kind = SamplingColumnKind::Logit;
    std::string head;               // its title, in the window's language ("top-k 5", "÷ 2")
    bool probability = false;       // a distribution (bars), else logits
    std::vector<float> value;       // [entries]
    std::vector<std::string> text;  // [entries] as drawn ("cut" where the stage dropped it)
    std::vector<bool> cut;          // [entries] dropped by this stage (0 after it)
    float rest = 0;                 // the mass of the tokens not listed (probabilities)
    std::string rest_text;          // as drawn; empty for the logit columns
};

// A piece of the draw strip: entry `row`'s interval [from, from + width) of the final
// distribution's cumulative mass (the coin in it picks that token).
struct DrawSegment {
    int row = 0;
    float from = 0, width = 0;
};

struct SamplingView {
    bool greedy = false;
    std::string rule;      // "logits ÷ 2 → softmax → top-k 5 (kept 5) → top-p off → draw"
    std::vector<int> ids;  // [entries] the tokens, most likely first, then the drawn one
    int drawn_row = -1;    // the drawn token's row; -1: no draw (a preview)
    float coin = -1;       // where the coin fell; -1: none
    std::vector<SamplingColumn> columns;  // the five stages, in order
    std::vector<DrawSegment> strip;       // in the draw's order
};

// Numbers as the panel writes them: a logit with two decimals, a probability in percent (one
// decimal; below 0.1% two significant digits; below a millionth 0.0%).
std::string logit_text(float v);
std::string probability_text(float p);

SamplingView sampling_view(const SamplingStages& s);

}  // namespace kvs::gui
