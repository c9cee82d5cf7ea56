#pragma once
// FLOPs and bytes of a forward pass, counted from the model's shapes (not measured).
//   matmul FLOPs     = 2 x rows x (weights of the linear layers)
//   attention FLOPs  = 4 x dim x (keys summed over query rows)   (q.k and p.v, per layer)
//   small-op FLOPs   = rmsnorm 4, rope 6/2, softmax 5 per score, swiglu 6, residual 1 per element;
//                      GPT-2's layernorm 8 (mean 1, deviation and its square 3, scale 4), gelu 8
//                      (tanh counted as one), bias and position add 1 per element
//   bytes moved      = every weight read once + K/V rows read once + K/V rows written
//                      (activations assumed to stay in cache; bytes_per_value per stored number:
//                      4 for our float32 engine, 2 for the bf16/fp16 of
//                      lessonlib/scale_accounting.h)
#include "core/model/model_config.h"

#include <cstddef>
#include <vector>

namespace kvs {

// The ops of the Llama and GPT-2 forward passes (core/model/op_log.h records them as they run);
// layer_ops gives each design's order within a layer.
enum class OpKind {
    Embedding,    // token ids -> rows of the embedding table
    RmsNorm,      // before attention
    QProj,        // x . wq
    KProj,        // x . wk
    VProj,        // x . wv
    QBias,        // q += bq (Qwen2's q/k/v biases; none in a Llama)
    KBias,        // k += bk
    VBias,        // v += bv
    Rope,         // rotate q and k by position
    KvAppend,     // write the new K and V rows to the cache
    Scores,       // q . K^T / sqrt(d_k), causal mask
    Softmax,      // scores -> weights
    WeightedSum,  // weights . V
    OutProj,      // . wo
    Residual,     // x += attention
    FfnNorm,      // rmsnorm before the MLP
    FfnGate,      // . w1
    FfnUp,        // . w3
    SwiGLU,       // silu(gate) * up
    FfnDown,      // . w2
    FfnResidual,  // x += MLP
    FinalNorm,    // rmsnorm of the last row
    Classifier,   // . wcls -> logits
    Sampling,     // logits -> the next token (on the host)
    // GPT-2's own (its projections and attention use the kinds above)
    PosEmbedding,    // positions -> rows of the learned position table
    PosAdd,          // x = token row + position row
    LayerNorm,       // before attention (ln_1)
    OutBias,         // + attention output bias
    FfnLayerNorm,    // before the MLP (ln_2)
    MlpUp,           // . w1 (c_fc)
    MlpUpBias,       // + b1
    Gelu,            // gelu (tanh form)
    MlpDown,         // . w2 (c_proj)
    MlpDownBias,     // + b2
    FinalLayerNorm,  // layernorm of the last row (ln_f)
    kCount
};
const char* op_kind_name(OpKind k);  // "embedding", "rmsnorm", "q projection", ...

struct OpShape {
    int rows = 0;
    int features = 0;
};

// Shapes and counted FLOPs of one op over `rows` rows whose queries start at position pos0
// (attention ops see pos0 + t + 1 keys at row t; Scores/Softmax/WeightedSum features are
// n_heads x keys of the last row).
struct OpCount {
    OpShape in, out;
    double flops = 0;
    bool matmul = false;     // a linear layer (counted in StepCounts::matmul_flops)
    bool attention = false;  // q.k or w.v (StepCounts::attention_flops)
};
OpCount count_op(OpKind k, const ModelConfig& c, int rows, int pos0);

// The ops one layer of `c`'s design issues, in order (core/model/transformer_model.cpp's forward
// passes; a test checks them against the op log).
std::vector<OpKind> layer_ops(const ModelConfig& c);

struct StepCounts {
    double flops = 0;         // all counted FLOPs
    double matmul_flops = 0;  // linear layers and classifier
    double attention_flops = 0;
    double bytes = 0;           // bytes moved, by the model above: the three below
    double weight_bytes = 0;    // every weight read once
    double kv_read_bytes = 0;   // the K/V rows attention reads (every key, every layer)
    double kv_write_bytes = 0;  // the K/V rows written
    StepCounts& operator+=(const StepCounts& o) {
        flops += o.flops;
        matmul_flops += o.matmul_flops;
        attention_flops += o.attention_flops;
        bytes += o.bytes;
        weight_bytes += o.weight_bytes;
        kv_read_bytes += o.kv_read_bytes;
        kv_write_bytes += o.kv_write_bytes;
        return *this;
    }
};

// One forward of T tokens at positions pos0..pos0+T-1 with logits for the last row only: the sum
// of count_op over its ops.
StepCounts count_llama_forward(const ModelConfig& c, int pos0, int T, double bytes_per_value = 4);
// What attention without the causal mask adds to a pass of T rows: the T(T-1)/2 (query, key)
// pairs the mask skips, each scored (2 dim), softmaxed (5 per head) and weighted (2 dim) in
// every layer.
StepCounts count_unmasked_pairs(const ModelConfig& c, int T);
// Bytes of the weights the forward pass reads once per call.
double weight_bytes(const ModelConfig& c, double bytes_per_value = 4);
// The position at which a step reading every cached K/V row (float32) reads as many K/V bytes as
// the weights `counts` says a pass reads: past it the cache is most of a decode step's traffic.
double kv_reads_pass_weights_at(const StepCounts& counts, const ModelConfig& c);

}  // namespace kvs
