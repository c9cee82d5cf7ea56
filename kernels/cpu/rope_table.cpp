// RoPE from a table of cos/sin (fast_ops.h). Scalar and compiled once, outside the SIMD paths:
// every path rotates with the same bits.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/fast_ops.h"

namespace kvs::cpu {

void RopeTable::grow(int positions, int head_dim) {
    if (head_dim != head_dim_) positions_ = 0;  // another model: start over
    head_dim_ = head_dim;
    const int pairs = head_dim / 2;
    cos_.resize(std::size_t(positions) * pairs);
    sin_.resize(std::size_t(positions) * pairs);
    for (int pos = positions_; pos < positions; ++pos)
        for (int p = 0; p < pairs; ++p) {
            // run.c's formula, evaluated once per (position, pair) instead of once per call
            const float freq = 1.0f / std::pow(10000.0f, (2 * p) / static_cast<float>(head_dim));
            const float angle = pos * freq;
            cos_[std::size_t(pos) * pairs + p] = std::cos(angle);
            sin_[std::size_t(pos) * pairs + p] = std::sin(angle);
        }
    positions_ = positions;
}

void RopeTable::apply(float* q, float* k, int T, int pos0, int dim, int kv_dim, int head_dim) {
    if (head_dim != head_dim_ || pos0 + T > positions_)
        grow(std::max(pos0 + T, head_dim == head_dim_ ? 2 * positions_ : 0), head_dim);
    const int pairs = head_dim / 2;
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
