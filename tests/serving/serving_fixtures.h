#pragma once
// What the serving tests share: the tiny GQA model, token ids that never end generation, a prompt
// generated alone (as generate does), and a whole serving run.
#include <cstdint>
#include <vector>

#include "core/model/model.h"
#include "core/serving/scheduler.h"

namespace kvs::test {

// dim 16, 4 heads over 2 kv heads (GQA), 2 layers, context 64, vocabulary 300.
const Model& serving_model();

// n token ids of the tiny vocabulary, none of them BOS (1), which ends generation.
std::vector<int> serving_ids(std::uint64_t seed, int n);

// The prompt's tokens and up to max_new more, through a Session alone (greedy, full cache).
std::vector<int> serving_alone(const std::vector<int>& prompt, int max_new);

// Eight prompts: one 20-token prefix, then 1..8 tokens of their own.
std::vector<std::vector<int>> shared_prefix_prompts();

// The prompts through a Scheduler to the end (all arriving at step 0); every block free after.
std::vector<ServeRequest> serve_all(const std::vector<std::vector<int>>& prompts, ServeConfig cfg,
                                    ServeStats* stats = nullptr);

}  // namespace kvs::test
