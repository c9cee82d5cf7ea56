#pragma once
// Cached versus uncached, in one number: the largest |logit difference| between the same step
// of two sessions (the same model, prompt and sampler, one with the KV cache and one without).
// Written once for the CLI's compare, the lessons' report and max_logit_diff, and the window.
#include "core/session/trace.h"

namespace kvs {

// max over the vocabulary of |a.logits[i] - b.logits[i]|; NaN when a step kept no logits (its
// payload was evicted) or the two do not have the same length.
double max_logit_difference(const StepRecord& a, const StepRecord& b);

}  // namespace kvs
