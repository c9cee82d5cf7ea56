#pragma once
// Lesson 9: the accounting of our small models applied to real model sizes on real GPUs. Nothing
// here is measured; FLOPs and bytes come from core/model/counts.h (the same formulas the engine's
// trace uses) at 2 bytes per value, the GPU figures from the vendors' datasheets.
//   KV cache       = 2 (K, V) x layers x kv_heads x head_dim x bytes x context x batch
//   prefill        = batch sequences of `context` tokens, one forward pass (positions 0..C-1)
//   decode step    = one new token per sequence, its query at position C-1 reading C K/V rows
//   compute time   = FLOPs / peak FLOP/s          memory time = bytes / bandwidth
//   bound          = whichever time is longer; arithmetic intensity = FLOPs / byte, compared
//                    with the GPU's ridge point peak / bandwidth
// Weights are read once per forward pass however large the batch, K/V rows once per sequence.
#include <string>
#include <vector>

#include "core/model/model_config.h"
#include "lessonlib/lesson.h"

namespace kvs {

struct ScaleModel {
    std::string key;   // used in @scale model=KEY
    std::string name;  // for people
    ModelConfig config;
    std::string source;  // where the shapes come from
};

struct ScaleGpu {
    std::string key;  // used in @scale gpu=KEY
    std::string name;
    double peak_flops =
        0;  // dense FP16/BF16 tensor FLOP/s (datasheet figures "with sparsity" halved)
    double bandwidth = 0;  // memory bytes/s
    double memory = 0;     // bytes
    std::string source;
};

// @scale model=loaded: the shapes of the model the lesson has loaded (lesson 2's roofline of its
// own prefill), resolved when the step plays (SessionLessonTarget::scale).
inline constexpr const char* kLoadedModel = "loaded";
ScaleModel scale_model_of(const std::string& name, const ModelConfig& c);

const std::vector<ScaleModel>& scale_models();
const std::vector<ScaleGpu>& scale_gpus();
const ScaleModel* find_scale_model(const std::string& key);  // nullptr when unknown
const ScaleGpu* find_scale_gpu(const std::string& key);

struct PhaseCost {
    double flops = 0;            // counted
    double attention_flops = 0;  // the part spent in attention (q.k and p.v)
    double bytes = 0;            // counted
    double intensity = 0;        // FLOPs per byte
    double compute_seconds = 0;
    double memory_seconds = 0;
    bool memory_bound = false;
    double seconds() const { return memory_bound ? memory_seconds : compute_seconds; }
};

struct ScaleReport {
    ScaleQuery query;
    ScaleModel model;
    ScaleGpu gpu;
    double params = 0;
    double weight_bytes = 0;
    double kv_bytes_per_token = 0;  // one sequence
    double kv_bytes = 0;            // context x batch
    double ridge = 0;               // the GPU's FLOPs per byte where compute and memory balance
    PhaseCost prefill;              // the whole batch's prompts, one pass
    PhaseCost decode;               // one step: one token for each sequence of the batch
    bool fits = false;              // weights + KV cache within the GPU's memory
};

// Throws kvs::Error for an unknown model or GPU, or a context beyond the model's.
ScaleReport scale_report(const ScaleQuery& q);
// The same for a model given by its shapes (q.model is not looked up).
ScaleReport scale_report(const ScaleQuery& q, const ScaleModel& m);

}  // namespace kvs
