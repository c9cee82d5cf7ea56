#pragma once
// Causal against bidirectional on one backend (core/session/cache_view.h, bidirectional): the pair
// of uncached sessions after the prefill and one decode step, and the checks every backend must
// pass: the causal session's earlier K/V rows do not move in any layer; the bidirectional
// session's do not in layer 0 and do from layer 1 on; both attend over the same tokens.
#include <string>

#include "core/model/backend.h"
#include "core/model/model.h"

namespace kvs::test {

void check_mask_deltas(const Model& m, Backend& be, const std::string& prompt);

}  // namespace kvs::test
