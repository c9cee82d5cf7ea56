#pragma once
// Prefill the slow way, for comparison with one batched pass: a Runner helper that sends the
// prompt through one token per forward call and puts the rows of every call back together in
// the shapes one pass over the whole prompt of P tokens gives, so the trace cannot tell them apart:
//   attention rows [n_layers, n_heads, P causal rows]   head outputs [n_layers, n_heads, P]
//   q_rows, attn_out [n_layers, P, dim]                  K/V rows [n_layers, 2, P, kv_dim]
//   ops: every call's ops, in order
#include <span>

#include "core/model/model.h"

namespace kvs {

// Appends tokens at positions runner.kv().len.. (0.. for a prompt); returns the counted work of
// the calls added up. `out` ends as the last call's result with the stitched rows.
StepCounts forward_token_by_token(Runner& runner, const Model& model, std::span<const int> tokens,
                                  const Capture& want, ForwardResult& out);

}  // namespace kvs
