#pragma once
// Fixed scales for a quantised KV cache (KvScaleMode::Tensor and ChannelK), calibrated before a
// run as vLLM calibrates its fp8 cache's k_scale and v_scale: the largest |K| and |V| each layer
// (each channel of a layer's K) reaches over some prompts, each computed alone through a float32
// cache, put on the format's largest value. Rows computed later with larger values are clamped
// (int8) or saturated (fp8): the measured effect (cache_effect.h) includes it.
#include <span>
#include <vector>

#include "core/model/kv_blocks.h"
#include "core/model/model.h"

namespace kvs {

// Throws kvs::Error for a model without a batched runner, a prompt beyond the context, or a
// mode that has no fixed scales (Token).
KvScales calibrate_kv_scales(const Model& model, Backend& backend,
                             std::span<const std::vector<int>> prompts, KvCacheType type,
                             KvScaleMode mode);

}  // namespace kvs
