#include "kernels/cpu/reference_ops.h"

#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "core/model/softmax.h"

namespace kvs::ref {

void rmsnorm(float* out, const float* x, const float* w, int T, int dim, float eps) {
    for (int t = 0; t < T; ++t) {
        const float* xr = x + std::size_t(t) * dim;
        float* o = out + std::size_t(t) * dim;
        float ss = 0.0f;
        for (int j = 0; j < dim; ++j) ss += xr[j] * xr[j];
        ss /= dim;
        ss += eps;
        ss = 1.0f / std::sqrt(ss);
        for (int j = 0; j < dim; ++j) o[j] = w[j] * (ss * xr[j]);
    }
}

void matmul(float* out, const float* x, const float* w, int T, int n, int d) {
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < d; ++i) {
            const float* wr = w + std::size_t(i) * n;
            const float* xr = x + std::size_t(t) * n;
            float val = 0.0f;
            for (int j = 0; j < n; ++j) val += wr[j] * xr[j];
            out[std::size_t(t) * d + i] = val;
        }
}

void rope(float* q, float* k, int T, int pos0, int dim, int kv_dim, int head_dim,
          const float* inv_freq) {
    for (int t = 0; t < T; ++t) {
        const int pos = pos0 + t;
        float* qr = q + std::size_t(t) * dim;
        float* kr = k + std::size_t(t) * kv_dim;
        for (int i = 0; i < dim; i += 2) {
            // run.c's 1.0f / powf(10000.0f, hd / (float)head_dim) for hd = i % head_dim, with
            // the model's base and scaling (core/model/rope_frequencies.h)
            const float angle = pos * inv_freq[(i % head_dim) / 2];
            const float c = std::cos(angle), s = std::sin(angle);
            const int rotations = i < kv_dim ? 2 : 1;  // k is narrower than q under GQA
            for (int r = 0; r < rotations; ++r) {
                float* v = r == 0 ? qr : kr;
                const float v0 = v[i], v1 = v[i + 1];
                v[i] = v0 * c - v1 * s;
                v[i + 1] = v0 * s + v1 * c;
            }
        }
    }
}

namespace {
// The causal mask: query row t of a pass whose first row is at position pos0 sees keys 0..pos0+t
// (itself and the ones before it); without the mask, all n_keys keys of the pass.
int last_visible_key(int t, int pos0, int n_keys, bool causal) {
    return causal ? pos0 + t : n_keys - 1;
}

// One attention score: q.k over one head.   qh, kh: [head_dim]
float key_score(const float* qh, const float* kh, int head_dim) {
    float score = 0.0f;
    for (int i = 0; i < head_dim; ++i) score += qh[i] * kh[i];
    return score;
}

// o = sum over keys s = 0..last of att[s] v_s, one head.   o: [head_dim]; V rows kv_dim apart
void weighted_sum_of_values(float* o, const float* att, const float* vh, int last, int kv_dim,
                            int head_dim) {
    std::memset(o, 0, head_dim * sizeof(float));
    for (int s = 0; s <= last; ++s, vh += kv_dim)
        for (int i = 0; i < head_dim; ++i) o[i] += att[s] * vh[i];
}
}  // namespace

void attention(float* out, const float* q, const float* k_cache, const float* v_cache, float* probs,
               int T, int pos0, int n_heads, int n_kv_heads, int head_dim, bool causal) {
    const int dim = n_heads * head_dim, kv_dim = n_kv_heads * head_dim;
    const int kv_mul = n_heads / n_kv_heads, n_keys = pos0 + T;
    const float sqrt_d = std::sqrt(static_cast<float>(head_dim));  // scores are q.k / sqrt_d
    std::vector<float> att(n_keys);
    for (int t = 0; t < T; ++t) {
        const int pos = last_visible_key(t, pos0, n_keys, causal);  // this query sees keys 0..pos
        for (int h = 0; h < n_heads; ++h) {
            // Query head h reads K/V head h / kv_mul (GQA); the cache's rows are kv_dim apart.
            const float* qh = q + std::size_t(t) * dim + h * head_dim;
            const std::size_t kvh = std::size_t(h / kv_mul) * head_dim;
            for (int s = 0; s <= pos; ++s)
                att[s] = key_score(qh, k_cache + std::size_t(s) * kv_dim + kvh, head_dim) / sqrt_d;
            softmax(std::span<float>(att.data(), pos + 1));  // over the visible keys 0..pos
            weighted_sum_of_values(out + std::size_t(t) * dim + h * head_dim, att.data(),
                                   v_cache + kvh, pos, kv_dim, head_dim);
            if (probs) {
                float* p = probs + (std::size_t(h) * T + t) * n_keys;
                std::memcpy(p, att.data(), (pos + 1) * sizeof(float));
                std::memset(p + pos + 1, 0, (n_keys - pos - 1) * sizeof(float));
            }
        }
    }
}

void swiglu(float* h1, const float* h3, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        float v = h1[i];
        v *= 1.0f / (1.0f + std::exp(-v));  // silu
        h1[i] = v * h3[i];
    }
}

void add(float* x, const float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

void layernorm(float* out, const float* x, const float* w, const float* b, int T, int dim,
               float eps) {
    for (int t = 0; t < T; ++t) {
        const float* xr = x + std::size_t(t) * dim;
        float* o = out + std::size_t(t) * dim;
        double sum = 0;
        for (int j = 0; j < dim; ++j) sum += xr[j];
        const float mean = static_cast<float>(sum / dim);
        double sq = 0;
        for (int j = 0; j < dim; ++j) sq += double(xr[j] - mean) * (xr[j] - mean);
        const float inv = 1.0f / std::sqrt(static_cast<float>(sq / dim) + eps);
        for (int j = 0; j < dim; ++j) o[j] = (xr[j] - mean) * inv * w[j] + b[j];
    }
}

void gelu(float* h, std::size_t n) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    for (std::size_t i = 0; i < n; ++i) {
        const float v = h[i];
        h[i] = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
    }
}

}  // namespace kvs::ref
