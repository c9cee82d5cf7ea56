#pragma once
// RoPE's frequencies, the one place they are worked out: pair p of every head turns by
// pos * inv_freq[p] radians. The backends' rope ops read this table; none computes its own.
#include <vector>

#include "core/model/model_config.h"

namespace kvs {

// inv_freq: [head_dim / 2], theta^(-2p / head_dim) / rope_factors[p], in float32 as run.c
// computes it (1.0f / powf(theta, 2p / (float)head_dim)), so llama2.c models turn exactly as
// run.c's do.
std::vector<float> rope_inverse_frequencies(const ModelConfig& c);

// Llama 3's rope scaling (Hugging Face's rope_type "llama3"), as per-pair divisors: pairs whose
// wavelength 2 pi / f is shorter than original_context / high_freq_factor keep their frequency
// (1), those longer than original_context / low_freq_factor are divided by `factor`, and the
// ones between blend the two: 1 / ((1 - s) / factor + s) with
// s = (original_context / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor).
// [head_dim / 2]. Throws kvs::Error when the parameters are not usable (named in the message).
std::vector<float> llama3_rope_factors(int head_dim, float theta, double factor,
                                       double low_freq_factor, double high_freq_factor,
                                       double original_context);

}  // namespace kvs
