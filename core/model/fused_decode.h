#pragma once
// One sequence's cached decode step through a backend's fused kernels (core/model/fused_ops.h):
// TransformerRunner::run_layers for one row, in 5 kernels a layer and 1 a token instead of 16
// and 3. The runner (core/model/transformer_runner_graph.cpp) lays the step out and calls
// run_fused_decode when the op-by-op path is not asked for (docs/cuda.md says when).
#include <cstddef>
#include <functional>

#include "core/model/compact_weights.h"
#include "core/model/fused_ops.h"
#include "core/model/kv_cache.h"
#include "core/model/llama_weights.h"
#include "core/model/op_log.h"

namespace kvs {

// What the step reads and writes, as the runner lays it out.
struct FusedDecodeStep {
    const ModelConfig& c;
    const LlamaWeights& W;  // host views; vec() and matrix() give the backend's
    std::function<DeviceSpan(const float* host, std::size_t n)> vec;
    std::function<FusedMatrix(MatrixKind kind, int layer)> matrix;
    KvCache& cache;
    DeviceSpan inv_freq;      // [head_dim / 2]
    const int* token;         // on the host
    int pos = 0;              // the token's position: the cache holds pos rows before the step
    DeviceSpan x, q, att, h;  // scratch: [dim], [dim], [dim], [hidden]
    DeviceSpan logits;        // [vocab]
    // Captures, empty when not wanted: attention [L, H, probs_stride]; q and the attention
    // output [L, dim]; the K and V rows [L, 2, kv_dim].
    DeviceSpan probs;
    std::size_t probs_stride = 0;
    DeviceSpan q_keep, out_keep, kv_keep;
    OpLog* log = nullptr;  // the op strip: every op, grouped by the kernel it ran in
};

void run_fused_decode(FusedOps& f, const FusedDecodeStep& s);

}  // namespace kvs
