#pragma once
// bench with --weights f16|bf16|q8_0: what the compact weights cost in accuracy and save in
// bytes, beside the speed. The same prompt through the compact model and its float32 twin (the
// same file opened with --weights f32) on the same backend, teacher-forced: both are fed
// float32's greedy tokens, so one near-tie cannot send the two down different texts and make
// every later difference meaningless. Up to the first step whose argmax differs, that is also
// the free-running greedy text of both.
#include <cstdint>
#include <vector>

#include "core/model/backend.h"
#include "core/model/model.h"

namespace kvs::cli {

struct WeightsGap {
    int steps = 0;                      // forward passes compared: the prompt's, then one per token
    double max_logit_diff = 0;          // max over steps of max_logit_difference (core/)
    int same_greedy = 0;                // steps before the first whose next token (argmax) differs
    bool diverged = false;              // whether one did within `steps`
    std::uint64_t bytes_per_token = 0;  // weights one decode token reads, counted from shapes
    std::uint64_t f32_bytes_per_token = 0;  // the same in float32
};

// Prefill of `prompt`, then `decode_steps` tokens (fewer when the context ends first).
WeightsGap measure_weights_gap(const Model& compact, const Model& f32, Backend& be,
                               const std::vector<int>& prompt, int decode_steps);

}  // namespace kvs::cli
