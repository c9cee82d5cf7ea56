#pragma once
// Greedy generations compared step by step: what the model-format tests (GGUF, Hugging Face)
// share when they check that a file read back is the model that was written.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace kvs::test {

struct GreedyRun {
    std::vector<int> tokens;
    std::vector<std::vector<float>> logits;  // one [vocab] per step
    std::string text;
};

// Greedy decoding of `prompt` on the CPU backend, at most `max_new` new tokens.
GreedyRun greedy_run(const Model& m, const std::string& prompt, int max_new);

// The largest |logit difference| over the steps both runs have (their vocabularies must agree).
float max_logit_diff(const GreedyRun& a, const GreedyRun& b);

std::vector<unsigned char> bytes_of(const std::filesystem::path& path);

}  // namespace kvs::test
