#pragma once
// Inside one attention row: the arithmetic the tutorials write as
//     out = softmax(q · Kᵀ / √d_k + mask) · V
// on the tensors the engine actually used at one step, for one layer, one query head and one
// query row. Built from the trace alone (views never run the model): q and the attention output
// the model used come from the step's capture; the K and V rows from the rows each step wrote,
// each marked with where it came from at this step (read from the cache, written by this step,
// or recomputed because the step ran without the cache).
//
// Shapes in the tutorials' notation (d_k = head_dim, T = keys this row's step can see):
//   decode, cached:   q [1, d_k] · Kᵀ [d_k, T] → scores [1, T]
//   prefill:          Q [T, d_k] · Kᵀ [d_k, T] → scores [T, T]   (this struct is one of its rows)
// With grouped-query attention several query heads read the same K/V head (kv_head); the query
// heads sharing it are listed.
//
// The toy model has no q or K vectors: its heads score keys by a rule (0 where the rule selects
// the key, −∞ where it does not), its K is the key's position and its V the token's value (d_v 1).
// For it scores_by_rule is set, q is empty and raw holds the rule's scores.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/session/trace.h"

namespace kvs {

enum class KvSource : std::uint8_t {
    Cached,      // read from the KV cache: written by an earlier step
    New,         // written to the cache by this step (its own token's K/V)
    Recomputed,  // uncached mode: recomputed from the tokens at this step
};
const char* kv_source_name(KvSource s);  // "cached", "new", "recomputed"
// Where step r's key at token index `key` came from: the rows the step wrote that the cache did
// not hold are new; before them, the rows it recomputed; before those, rows read from the cache.
KvSource kv_source_of(const StepRecord& r, int key);

struct AttentionExplain {
    int step = 0;  // index into the trace (0: prefill)
    int layer = 0;
    int head = 0;     // query head
    int kv_head = 0;  // the K/V head it reads: head / (n_heads / n_kv_heads)
    std::vector<int>
        heads_sharing_kv;  // every query head that reads kv_head (GQA), this one included
    int row = 0;           // query row among the step's kept rows
    int q_pos = 0;         // the query's position in the sequence, 0-based
    Phase phase = Phase::Prefill;
    CacheMode mode = CacheMode::Cached;
    AttentionMask mask = AttentionMask::Causal;  // the step's (key_visible decides `masked`)
    int head_dim = 0;                            // d_k (the toy: 1)
    int n_keys = 0;               // keys shown: token indexes 0..n_keys-1 (masked ones included)
    int query_rows_computed = 0;  // rows of Q this step computed (1 cached decode, T otherwise)
    int query_rows_used = 0;      // rows of Q whose attention the step needed (1 at decode)
    // Uncached decode: keys the step recomputed although the cache held them. Their K/V rows
    // shown are the ones the cache held (written by the step that introduced each position); the
    // step measured the largest difference to its recomputation (-1: not compared).
    int kv_rows_recomputed = 0;
    double recomputed_max_delta = -1;

    bool scores_by_rule = false;       // the toy: raw scores come from the head's rule, q is empty
    std::vector<float> q;              // [d_k], after RoPE, as the attention kernel read it
    std::vector<float> k;              // [n_keys, d_k]   (the toy: the key's position, d_k 1)
    std::vector<float> v;              // [n_keys, d_v]   (the toy: the token's value, d_v 1)
    std::vector<KvSource> source;      // [n_keys]
    std::vector<float> raw;            // [n_keys] q · k_j (the toy: the rule's 0 / −∞)
    float scale = 1.0f;                // 1 / √d_k
    std::vector<float> scaled;         // [n_keys] raw · scale
    std::vector<std::uint8_t> masked;  // [n_keys] 1: set to −∞ before the softmax (key_visible)
    std::vector<float> weights;        // [n_keys] the softmax weights the model used (captured)
    std::vector<float> output;         // [d_v] Σ_j weights_j · v_j, from the numbers above
    std::vector<float> model_output;   // [d_v] the attention output the model used (captured)
    bool empty_row = false;            // every key masked: no output ("none"; the toy's even head)
};

// Every kept query row of one (step, layer, head) at once: the [rows, n_keys] block whose row r is
// the query at token index q_pos0 + r, each cell the same number the row's breakdown shows
// (explain_attention computes its row through the same code). The matrix Inside attention draws
// beside the row at a stage of the scores: the prefill's [T, T], an uncached step's every row,
// a cached decode step's one row; under the step's mask (causal, bidirectional: every key).
struct AttentionBlock {
    int step = 0, layer = 0, head = 0;
    int q_pos0 = 0;  // the token index of row 0
    int rows = 0;
    int n_keys = 0;
    int head_dim = 0;
    bool scores_by_rule = false;
    float scale = 1.0f;
    std::vector<float> q;                 // [rows, d_k] (empty for the toy)
    std::vector<float> raw;               // [rows, n_keys]
    std::vector<float> scaled;            // [rows, n_keys]
    std::vector<std::uint8_t> masked;     // [rows, n_keys]
    std::vector<float> weights;           // [rows, n_keys] the weights the model used
    std::vector<std::uint8_t> empty_row;  // [rows]

    std::size_t at(int row, int key) const { return std::size_t(row) * n_keys + key; }
    // A cell as a stage of the arithmetic shows it: 1 q·k, 2 ×1/√d_k, 3 + mask (−∞ where
    // masked), 4 the weight (NaN where masked or the row is empty: no weight). Other stages: NaN.
    float stage_value(int stage, int row, int key) const;
};

std::optional<AttentionBlock> explain_attention_block(const Trace& trace, const ModelConfig& config,
                                                      int step, int layer, int head,
                                                      std::string* why);

// The breakdown of one query row of one step. nullopt, with *why set to one line a user can read,
// when the step, layer, head or row does not exist, or when the payloads it needs were dropped
// by the trace's memory budget.
std::optional<AttentionExplain> explain_attention(const Trace& trace, const ModelConfig& config,
                                                  int step, int layer, int head, int row,
                                                  std::string* why);

// The same for the query at token index `index` (position - 1) among step `step`'s kept rows;
// index < 0: the step's newest row. nullopt, with *why, when the step holds no such row (and
// which step does, when one does).
std::optional<AttentionExplain> explain_query(const Trace& trace, const ModelConfig& config,
                                              int step, int layer, int head, int index,
                                              std::string* why);

// The softmax of the shown scores (scaled, masked keys at -inf) computed afresh in double:
// [n_keys], all 0 for an empty row. Equal to `weights` within float rounding when the breakdown is
// right.
std::vector<double> softmax_of_shown(const AttentionExplain& e);
// max_j |softmax_of_shown - weights| and max_i |output - model_output| (0 for an empty row whose
// model output is none, infinity when one is none and the other not).
double softmax_error(const AttentionExplain& e);
double output_error(const AttentionExplain& e);

}  // namespace kvs
