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

Draw Sampler::sample(std::span<const float> logits) {
    const int n = static_cast<int>(logits.size());
    if (config_.temperature == 0.0f || n == 1) return {argmax(logits), -1.0f};

    probs_.resize(n);
    for (int i = 0; i < n; ++i) probs_[i] = logits[i] / config_.temperature;
    softmax(probs_, probs_);
    if (config_.top_k > 0 && config_.top_k < n) {
        // Zero all but the k largest, then renormalise.
        order_.resize(n);
        std::iota(order_.begin(), order_.end(), 0);
        std::nth_element(order_.begin(), order_.begin() + (config_.top_k - 1), order_.end(),
                         [&](int a, int b) { return probs_[a] > probs_[b]; });
        const float kth = probs_[order_[config_.top_k - 1]];
        int kept = 0;
        float sum = 0.0f;
        for (int i = 0; i < n; ++i) {
            if (probs_[i] > kth || (probs_[i] == kth && kept < config_.top_k)) {
                ++kept;
                sum += probs_[i];
            } else {
                probs_[i] = 0.0f;
            }
        }
        for (float& p : probs_) p /= sum;
    }
    const float coin = random_f32();
    if (config_.top_p <= 0.0f || config_.top_p >= 1.0f) {
        float cdf = 0.0f;
        for (int i = 0; i < n; ++i) {
            cdf += probs_[i];
            if (coin < cdf) return {i, coin};
        }
        return {n - 1, coin};  // rounding
    }
    // Nucleus: the smallest set of most likely tokens whose mass exceeds top_p. Tokens below
    // (1 - top_p) / (n - 1) cannot be in it, so they are dropped before sorting.
    const float cutoff = (1.0f - config_.top_p) / (n - 1);
    order_.clear();
    for (int i = 0; i < n; ++i)
        if (probs_[i] >= cutoff) order_.push_back(i);
    // NaN probabilities (weights that overflow to inf or NaN, e.g. a foreign file of the right
    // size) pass no cutoff: fall back to argmax instead of indexing an empty list.
    if (order_.empty()) return {argmax(logits), coin};
    std::stable_sort(order_.begin(), order_.end(),
                     [&](int a, int b) { return probs_[a] > probs_[b]; });
    float cum = 0.0f;
    int last = static_cast<int>(order_.size()) - 1;
    for (int i = 0; i < static_cast<int>(order_.size()); ++i) {
        cum += probs_[order_[i]];
        if (cum > config_.top_p) {
            last = i;
            break;
        }
    }
    const float r = coin * cum;
    float cdf = 0.0f;
    for (int i = 0; i <= last; ++i) {
        cdf += probs_[order_[i]];
        if (r < cdf) return {order_[i], coin};
    }
    return {order_[last], coin};
}

}  // namespace kvs
