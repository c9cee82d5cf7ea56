#pragma once
// The next-token panel (gui/panels/next_token.cpp): the step's choice as stages (logits ÷
// temperature → softmax → top-k → top-p → the draw, core/session/sampling_stages.h), the
// sampler's controls and their keys. Settings changed in the window reshape the shown step's kept
// logits at once through the same function, marked as a preview beside what the draw used.
#include <cstdint>

#include "gui/draw/frame_context.h"

namespace kvs::gui {

// The stages drawn last and what they were made from: made again when any of it changes.
struct NextTokenPanel {
    std::uint64_t generation = 0;
    int step = -1;
    const float* logits = nullptr;
    SamplerConfig config;
    float coin = -1;
    int entries = 0;
    SamplingStages stages;
};

// The sampler's keys (gui/state/shortcuts.h): temperature ± 0.1, top-k ± 1, top-p ± 0.05 (`down`:
// Shift), set for the steps to come as the controls set it (the random stream restarts).
enum class SamplerKnob { Temperature, TopK, TopP };
void nudge_sampler(FrameContext& f, SamplerKnob knob, bool down);

void draw_next_token(FrameContext& f, NextTokenPanel& p);
// The stages of step `step` (record `r`) shaped at `shown`: the draw it made, or a preview
// (gui/panels/next_token_stages.cpp).
void draw_sampling_stages(FrameContext& f, NextTokenPanel& p, const StepRecord& r, int step,
                          const SamplerConfig& shown, bool preview);

}  // namespace kvs::gui
