#pragma once
// Two backends fed the same tokens: the reference's greedy choices are given to both sides, so a
// near-tie that one side breaks differently cannot send the two down different texts. Compares
// the logits (and the captured attention) after every forward pass.
#include <string>

#include "core/model/backend.h"
#include "core/model/model.h"

namespace kvs::test {

struct TeacherForcedGap {
    int steps = 0;               // forward passes compared (the prompt's, then one per token)
    double worst_logit = 0;      // max |a - b| over every logit of every step
    double worst_rel_logit = 0;  // the same, each step divided by max |reference logit|
    double worst_attention = 0;  // max |a - b| over every captured attention weight
};

// Prefill of `prompt`, then `decode_steps` single tokens (the reference's argmax each time).
TeacherForcedGap teacher_forced_gap(const Model& model, Backend& reference, Backend& other,
                                    const std::string& prompt, int decode_steps);

}  // namespace kvs::test
