// RoPE from a table of cos/sin (fast_ops.h). Scalar and compiled once, outside the SIMD paths:
// every path rotates with the same bits.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/fast_ops.h"

namespace kvs::cpu {

void RopeTable::grow(int positions) {
    const std::size_t pairs = inv_freq_.size();
    cos_.resize(std::size_t(positions) * pairs);
    sin_.resize(std::size_t(positions) * pairs);
    for (int pos = positions_; pos < positions; ++pos)
        for (std::size_t p = 0; p < pairs; ++p) {
            // run.c's angle, evaluated once per (position, pair) instead of once per call
            const float angle = pos * inv_freq_[p];
            cos_[pos * pairs + p] = std::cos(angle);
            sin_[pos * pairs + p] = std::sin(angle);
        }
    positions_ = positions;
}

void RopeTable::apply(float* q, float* k, int T, int pos0, int dim, int kv_dim, int head_dim,
                      const float* inv_freq) {
    const int pairs = head_dim / 2;
    if (!std::equal(inv_freq, inv_freq + pairs, inv_freq_.begin(), inv_freq_.end())) {
        inv_freq_.assign(inv_freq, inv_freq + pairs);  // another model: start over
        positions_ = 0;
    }
    if (pos0 + T > positions_) grow(std::max(pos0 + T, 2 * positions_));
    for (int t = 0; t < T; ++t) {
        const float* c = cos_.data() + std::size_t(pos0 + t) * pairs;
        const float* s = sin_.data() + std::size_t(pos0 + t) * pairs;
        // q: [dim] and k: [kv_dim] rotate pair (i, i+1) by the angle of pair (i % head_dim) / 2
        for (int which = 0; which < 2; ++which) {
            const int width = which == 0 ? dim : kv_dim;
            float* v = (which == 0 ? q : k) + std::size_t(t) * width;
            for (int i = 0; i < width; i += 2) {
                const int p = (i % head_dim) / 2;
                const float v0 = v[i], v1 = v[i + 1];
                v[i] = v0 * c[p] - v1 * s[p];
                v[i + 1] = v0 * s[p] + v1 * c[p];
            }
        }
    }
}

}  // namespace kvs::cpu
