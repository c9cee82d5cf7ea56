#pragma once
// FLOPs and bytes of a forward pass, counted from the model's shapes (not measured).
//   matmul FLOPs     = 2 x rows x (weights of the linear layers)
//   attention FLOPs  = 4 x dim x (keys summed over query rows)   (q.k and p.v, per layer)
//   small-op FLOPs   = rmsnorm 4, rope 6/2, softmax 5 per score, swiglu 6, residual 1 per element
//   bytes moved      = every weight read once + K/V rows read once + K/V rows written
//                      (activations assumed to stay in cache; bytes_per_value per stored number:
//                      4 for our float32 engine, 2 for the bf16/fp16 of
//                      lessonlib/scale_accounting.h)
#include "core/model_config.h"

namespace kvs {

struct StepCounts {
    double flops = 0;         // all counted FLOPs
    double matmul_flops = 0;  // linear layers and classifier
    double attention_flops = 0;
    double bytes = 0;  // bytes moved, by the model above
    StepCounts& operator+=(const StepCounts& o) {
        flops += o.flops;
        matmul_flops += o.matmul_flops;
        attention_flops += o.attention_flops;
        bytes += o.bytes;
        return *this;
    }
};

// One forward of T tokens at positions pos0..pos0+T-1 with logits for the last row only.
StepCounts count_llama_forward(const ModelConfig& c, int pos0, int T, double bytes_per_value = 4);
// Bytes of the weights the forward pass reads once per call.
double weight_bytes(const ModelConfig& c, double bytes_per_value = 4);

}  // namespace kvs
