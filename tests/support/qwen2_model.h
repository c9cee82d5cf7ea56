#pragma once
// A Qwen2-shaped model for tests: a Llama model's weights with q/k/v biases added.
#include <cstdint>
#include <memory>

#include "core/model/transformer_model.h"

namespace kvs::test {

// `m`'s weights (llama2.c's order, copied) followed by biases bq, bk, bv drawn from `seed`
// (uniform in [-0.5, 0.5]), and its tokenizer; generation stops at BOS as for `m`.
std::unique_ptr<TransformerModel> with_qkv_biases(const Model& m, std::uint64_t seed);

}  // namespace kvs::test
