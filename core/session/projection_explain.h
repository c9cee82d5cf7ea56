#pragma once
// Where one query row's q, and its token's K and V rows, came from at one layer and head, the
// stages before Inside attention's scores:
//   x (the layer's input) → norm → x_norm
//   x_norm · W_qᵀ → q,  x_norm · W_kᵀ → k,  x_norm · W_vᵀ → v     (+ a bias: Qwen2, GPT-2)
//   RoPE turns q and k pair by pair by an angle that grows with the position: a rotation, so
//   |q| and |k| are the same before and after (measured here, with each pair's angle)
//   k after RoPE and v are the K/V row written to the cache at the query's position; the query
//   reads that row and the earlier ones (cached, new or recomputed at this step).
// Read from the step's capture alone (StepRecord::projections, q_rows; views never run the
// model). The weights' rows are the model's (core/model/weight_strip.h), which a replay has not.
#include <optional>
#include <string>
#include <vector>

#include "core/session/attention_explain.h"
#include "core/session/trace.h"

namespace kvs {

struct ProjectionExplain {
    int step = 0, layer = 0, head = 0, kv_head = 0;
    int row = 0;    // the query row among the step's kept rows
    int q_pos = 0;  // its token index (position - 1)
    Phase phase = Phase::Prefill;
    CacheMode mode = CacheMode::Cached;
    int dim = 0, head_dim = 0, n_heads = 0, n_kv_heads = 0;
    bool rope = true;              // false: GPT-2, whose learned positions were added to x instead
    bool layer_norm = false;       // the norm is GPT-2's LayerNorm (else RMSNorm)
    bool bias = false;             // q, k and v have a bias added after the matmul (Qwen2, GPT-2)
    std::vector<float> x;          // [dim] the layer's input: the residual stream
    std::vector<float> x_norm;     // [dim] the attention norm's output
    double x_mean = 0, x_rms = 0;  // of x, measured: what the norm divides by (RMSNorm: x_rms)
    // This head's part of the row: q's columns head·d_k.., k's and v's of the K/V head.
    std::vector<float> q, q_rope;     // [head_dim] before and after RoPE
    std::vector<float> k, k_rope, v;  // [head_dim] before and after RoPE; v is not rotated
    // Euclidean lengths, measured: a rotation keeps them (equal to float rounding).
    double q_len = 0, q_rope_len = 0, k_len = 0, k_rope_len = 0;
    // Each pair (2i, 2i+1)'s turn by RoPE, measured from the vectors: [head_dim / 2] radians in
    // (-π, π]; NaN for a pair of zeros. RoPE's own angle is position × ω_i (core/model/
    // rope_frequencies.h), wrapped into the same range.
    std::vector<float> q_angle, k_angle;
    // The matrices' rows behind this head: W_q rows wq_first.., W_k and W_v rows wk_first..
    // (head_dim each; core/model/weight_strip.h draws them).
    int wq_first = 0, wk_first = 0;
    // The cache: this token's K and V rows are row cache_row of every layer's cache (written by
    // this step: new, or recomputed when the step ran without the cache); the query reads
    // keys_read rows, its own included, the earlier ones each cached, new or recomputed.
    int cache_row = 0;
    KvSource own = KvSource::New;
    int keys_read = 0;
    int read_cached = 0, read_new = 0, read_recomputed = 0;
};

// Row `row` of step `step`'s kept rows at one layer and head. nullopt, with *why set to one line,
// when they do not exist or the step kept no projections (a pass through the fused decode
// kernels, capture off, or its payload dropped by the trace's budget).
std::optional<ProjectionExplain> explain_projection(const Trace& trace, const ModelConfig& config,
                                                    int step, int layer, int head, int row,
                                                    std::string* why);
// The same for the query at token index `index` among the step's kept rows (< 0: the newest).
std::optional<ProjectionExplain> explain_projection_query(const Trace& trace,
                                                          const ModelConfig& config, int step,
                                                          int layer, int head, int index,
                                                          std::string* why);

}  // namespace kvs
