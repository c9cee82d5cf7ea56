#pragma once
// A GPT-2-shaped model for tests: random weights of GPT-2's design (LayerNorm with bias, learned
// positions, biases on every linear layer, GELU MLP) in the shapes of a given model, with that
// model's tokenizer, so the same prompts run through both.
#include <cstdint>
#include <memory>

#include "core/model/transformer_model.h"

namespace kvs::test {

// GPT-2 shapes from `m`'s: dim, heads, layers, vocab and context as `m`'s (n_positions = its
// context), hidden 4 x dim, a shared classifier. Matrices and embeddings uniform in
// +-1/sqrt(dim), LayerNorm gains 1 +- 0.25, biases +-0.1, all drawn from `seed`.
// `mlp_output` false: the MLP's down projection and its bias are zero, so the MLP adds nothing
// (the peer test's check of everything but GELU, which llama.cpp computes through F16).
std::unique_ptr<TransformerModel> random_gpt2(const Model& m, std::uint64_t seed,
                                              bool mlp_output = true);
// That model in the default model's shapes, with its tokenizer: the suites' usual GPT-2.
std::unique_ptr<TransformerModel> default_gpt2(std::uint64_t seed);

}  // namespace kvs::test
