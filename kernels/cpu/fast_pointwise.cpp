// The row-wise and element-wise ops: rmsnorm, SwiGLU, residual add, and RoPE from a table.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/fast_ops.h"
#include "kernels/cpu/vec_math.h"

namespace kvs::cpu {

void rmsnorm(float* out, const float* x, const float* w, int T, int dim) {
    for (int t = 0; t < T; ++t) {
        const float* xr = x + std::size_t(t) * dim;
        float* o = out + std::size_t(t) * dim;
        float ss = dot(xr, xr, dim) / dim + 1e-5f;
        ss = 1.0f / std::sqrt(ss);
        for (int j = 0; j < dim; ++j) o[j] = w[j] * (ss * xr[j]);
    }
}

void swiglu(float* h1, const float* h3, std::size_t n) {
    // silu(v) * h3 = v / (1 + exp(-v)) * h3, kLanes elements at a time
    auto block = [](Vec v, Vec h) __attribute__((always_inline)) {
        return v * (1.0f / (1.0f + exp_approx(-v))) * h;
    };
    std::size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) store(h1 + i, block(load(h1 + i), load(h3 + i)));
    if (i < n) {
        const int rest = static_cast<int>(n - i);
        store_partial(h1 + i, block(load_partial(h1 + i, rest), load_partial(h3 + i, rest)), rest);
    }
}

void add(float* x, const float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

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
