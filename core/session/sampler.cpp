#include "core/session/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/util/splitmix64.h"

namespace kvs {

int argmax(std::span<const float> v) {
    int best = 0;
    for (int i = 1; i < static_cast<int>(v.size()); ++i)
        if (v[i] > v[best]) best = i;  // strict: the lowest id wins a tie
    return best;
}

std::uint64_t sampler_state(std::uint64_t seed) {
    if (seed != 0) return seed;
    // splitmix64's first output from state 0: a well-mixed nonzero word.
    std::uint64_t state = 0;
    return splitmix64_next(state);
}

float Sampler::random_f32() {
    // xorshift64*, as run.c, so a seed gives the same draws as llama2.c
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    const auto u = static_cast<std::uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
    return (u >> 8) / 16777216.0f;
}

void shape_distribution(std::span<const float> logits, const SamplerConfig& c,
                        ShapedDistribution& d, bool keep_tempered) {
    const int n = static_cast<int>(logits.size());
    std::vector<float>& probs = d.probs;
    probs.resize(n);
    for (int i = 0; i < n; ++i) probs[i] = logits[i] / c.temperature;
    softmax(probs, probs);
    if (keep_tempered)
        d.tempered = probs;
    else
        d.tempered.clear();
    d.kept_top_k = n;
    if (c.top_k > 0 && c.top_k < n) {
        // Zero all but the k largest, then renormalise.
        std::vector<int>& order = d.order;
        order.resize(n);
        std::iota(order.begin(), order.end(), 0);
        std::nth_element(order.begin(), order.begin() + (c.top_k - 1), order.end(),
                         [&](int a, int b) { return probs[a] > probs[b]; });
        const float kth = probs[order[c.top_k - 1]];
        int kept = 0;
        float sum = 0.0f;
        for (int i = 0; i < n; ++i) {
            if (probs[i] > kth || (probs[i] == kth && kept < c.top_k)) {
                ++kept;
                sum += probs[i];
            } else {
                probs[i] = 0.0f;
            }
        }
        for (float& p : probs) p /= sum;
        d.kept_top_k = kept;
    }
    d.top_p_on = c.top_p > 0.0f && c.top_p < 1.0f;
    d.order.clear();
    d.nucleus = 0;
    d.nucleus_mass = 1.0f;
    d.no_candidates = false;
    if (!d.top_p_on) return;
    // Nucleus: the smallest set of most likely tokens whose mass exceeds top_p. Tokens below
    // (1 - top_p) / (n - 1) cannot be in it, so they are dropped before sorting.
    const float cutoff = (1.0f - c.top_p) / (n - 1);
    for (int i = 0; i < n; ++i)
        if (probs[i] >= cutoff) d.order.push_back(i);
    // NaN probabilities pass no cutoff: the draw falls back to argmax instead of indexing an
    // empty list.
    if (d.order.empty()) {
        d.no_candidates = true;
        return;
    }
    std::stable_sort(d.order.begin(), d.order.end(),
                     [&](int a, int b) { return probs[a] > probs[b]; });
    float cum = 0.0f;
    int last = static_cast<int>(d.order.size()) - 1;
    for (int i = 0; i < static_cast<int>(d.order.size()); ++i) {
        cum += probs[d.order[i]];
        if (cum > c.top_p) {
            last = i;
            break;
        }
    }
    d.nucleus = last + 1;
    d.nucleus_mass = cum;
}

int draw_from(const ShapedDistribution& d, std::span<const float> logits, float coin) {
    const std::vector<float>& probs = d.probs;
    const int n = static_cast<int>(probs.size());
    if (!d.top_p_on) {
        float cdf = 0.0f;
        for (int i = 0; i < n; ++i) {
            cdf += probs[i];
            if (coin < cdf) return i;
        }
        return n - 1;  // rounding
    }
    if (d.no_candidates) return argmax(logits);
    const float r = coin * d.nucleus_mass;
    float cdf = 0.0f;
    for (int i = 0; i < d.nucleus; ++i) {
        cdf += probs[d.order[i]];
        if (r < cdf) return d.order[i];
    }
    return d.order[d.nucleus - 1];
}

Draw Sampler::sample(std::span<const float> logits) {
    const int n = static_cast<int>(logits.size());
    if (config_.temperature == 0.0f || n == 1) return {argmax(logits), -1.0f};
    shape_distribution(logits, config_, shaped_);
    const float coin = random_f32();
    return {draw_from(shaped_, logits, coin), coin};
}

}  // namespace kvs
