#pragma once
// Why K and V are cached and Q is not, counted per layer from a step's shapes. A layer computes
// one query row per token the pass processes; what each row's attention output is for:
//   - the newest row's leads to this step's output (the next token), at every layer;
//   - below the last layer, an earlier row's output is the input of the next layer's K/V row of
//     the same position (and of nothing that reaches the output): at the prefill that K/V row is
//     new and kept in the cache; without the cache (an uncached decode, and both sessions of the
//     bidirectional view) the step before computed it too, so the row was computed only to
//     rebuild it;
//   - at the last layer no layer above reads an earlier row's output and only the newest row
//     reaches the logits: those rows are thrown away (at the prefill too).
// A cached decode computes one row per layer, the newest: nothing is thrown away, and no earlier
// token's query is ever needed again, which is why no cache keeps Q. These are the counts;
// lessonlib/why_not_q_words.h says them in words.
#include <vector>

#include "core/session/trace.h"

namespace kvs {

struct QueryRowUse {
    int layer = 0;
    int computed = 0;         // query rows the layer computed at the step
    int for_output = 0;       // the newest row: its output leads to the next token
    int build_next_kv = 0;    // only feed the next layer's K/V rows, new ones (kept in the cache)
    int rebuild_next_kv = 0;  // only feed the next layer's K/V rows, which the cache held
    int thrown_away = 0;      // last layer: read by nothing after the attention
    // Without the causal mask the rows rebuilt differ from the ones the cache held: the new
    // token reached them (core/session/trace.h, AttentionMask).
    bool rebuilt_changed = false;
};

// Each layer's accounting of step `r` of a model with `n_layers` layers: [n_layers].
std::vector<QueryRowUse> query_row_use(const StepRecord& r, int n_layers);

// The measured largest |recomputed - held| of layer `layer`'s K and V rows at step `r` (the
// step's largest over every layer where the step kept no per-layer figures, or `layer` < 0); -1
// when nothing was compared. Without the causal mask layer 0's is 0 and the layers above differ.
double kv_recomputed_delta(const StepRecord& r, int layer);

}  // namespace kvs
