#pragma once
// Next-token choice. Temperature 0 is argmax (ties to the lowest id). Otherwise, as llama2.c's
// run.c: logits / temperature, softmax, one xorshift draw, then nucleus (top-p) or plain
// multinomial sampling; top-k, when set, keeps the k most likely tokens first.
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/softmax.h"

namespace kvs {

struct SamplerConfig {
    float temperature = 0.0f;
    int top_k = 0;       // 0: off
    float top_p = 0.9f;  // <= 0 or >= 1: off
    std::uint64_t seed = 42;
};

struct Draw {
    int token = 0;
    float coin = -1.0f;  // the uniform draw in [0, 1), -1 when greedy
};

// xorshift's starting state for `seed`. Every nonzero seed is used as it is (run.c's sequence for
// the same seed); 0, the one state xorshift never leaves (all draws 0), becomes splitmix64(0).
std::uint64_t sampler_state(std::uint64_t seed);

class Sampler {
  public:
    explicit Sampler(const SamplerConfig& c) : config_(c), state_(sampler_state(c.seed)) {}
    Draw sample(std::span<const float> logits);
    void reseed() { state_ = sampler_state(config_.seed); }
    const SamplerConfig& config() const { return config_; }

  private:
    float random_f32();
    SamplerConfig config_;
    std::uint64_t state_;
    std::vector<float> probs_;
    std::vector<int> order_;
};

int argmax(std::span<const float> v);

}  // namespace kvs
