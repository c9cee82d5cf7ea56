#pragma once
// Next-token choice. Temperature 0 is argmax (ties to the lowest id). Otherwise, as llama2.c's
// run.c: logits / temperature, softmax, one xorshift draw, then nucleus (top-p) or plain
// multinomial sampling; top-k, when set, keeps the k most likely tokens first. The distribution
// the draw indexes is shaped by one function (shape_distribution) that the stages a step records
// (core/session/sampling_stages.h) read too.
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

// The distribution a draw at a temperature indexes, shaped from the logits in run.c's order:
// softmax(logits / T), top-k's k most likely kept and renormalised (the others 0), then with
// top-p the nucleus: the most likely tokens, best first, until their mass first exceeds top_p.
struct ShapedDistribution {
    bool top_p_on = false;
    std::vector<float> tempered;  // [vocab] softmax(logits / T), when shaped with keep_tempered
    std::vector<float> probs;     // [vocab] after top-k: the kept renormalised, the others 0
    int kept_top_k = 0;           // tokens top-k kept (vocab when off)
    // top-p: the candidates by probability, best first (stable by id); order[0..nucleus) is the
    // nucleus, whose mass in probs is nucleus_mass (the draw scales its coin by it). Without
    // top-p the draw walks probs by token id.
    std::vector<int> order;
    int nucleus = 0;
    float nucleus_mass = 1.0f;
    // top-p found no token above its cutoff (NaN probabilities, e.g. weights that overflow):
    // the draw falls back to the largest logit.
    bool no_candidates = false;
};
// logits: [vocab], vocab >= 2, c.temperature > 0. `out`'s vectors are reused between calls.
void shape_distribution(std::span<const float> logits, const SamplerConfig& c,
                        ShapedDistribution& out, bool keep_tempered = false);
// The token a coin in [0, 1) picks from a shaped distribution: the first whose cumulative mass
// exceeds it (top-p: coin x nucleus_mass over the nucleus, best first; else over probs by id).
int draw_from(const ShapedDistribution& d, std::span<const float> logits, float coin);

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
    ShapedDistribution shaped_;
};

int argmax(std::span<const float> v);

}  // namespace kvs
