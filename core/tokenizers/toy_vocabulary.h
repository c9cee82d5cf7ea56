#pragma once
// The toy model's whole vocabulary: each word, the scalar value it carries (what the V cache
// stores for it) and its projection row (how strongly it follows each head's output). Defined
// once, in toy_vocabulary.cpp; the tokenizer, the model and the views all read this table.
#include <array>
#include <span>

namespace kvs {

constexpr int kToyHeads = 4;  // even, last, first, all

struct ToyWord {
    const char* text;
    float value;
    // logit(word) = projection . context, context: [kToyHeads] = the heads' outputs at the last
    // position, in head order (even, last, first, all).
    std::array<float, kToyHeads> projection;
};

std::span<const ToyWord> toy_vocabulary();

}  // namespace kvs
