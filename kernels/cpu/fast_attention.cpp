// Causal attention, one (query row, head) at a time, as run.c does it: scores against every
// visible key, softmax, weighted sum of the values. The loops over keys are what costs here (at
// position p, 2 * p * head_dim multiply-adds and p exponentials per head), so each is a lane loop
// or a vectorizable exp; heads run on threads when the call is big enough.
#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "kernels/cpu/fast_ops.h"
#include "kernels/cpu/vec_math.h"

namespace kvs::cpu {
namespace {

constexpr double kMinParallelMacs = 1 << 15;  // below this, waking threads costs more than it saves

float max_of(const float* a, int n) {
    Vec acc = splat(a[0]);
    int j = 0;
    for (; j + kLanes <= n; j += kLanes) {
        const Vec v = load(a + j);
        acc = v > acc ? v : acc;
    }
    float mx = acc[0];
    for (int k = 1; k < kLanes; ++k) mx = acc[k] > mx ? acc[k] : mx;
    for (; j < n; ++j) mx = a[j] > mx ? a[j] : mx;
    return mx;
}

// Eight keys' scores at once: lane sums of q * k[s + u] over the head's dimensions, reduced
// together; per key the same arithmetic as dot(qh, k[s + u], head_dim).
Vec eight_scores(const float* qh, const float* k, int kv_dim, int head_dim) {
    Vec parts[8] = {};
    int i = 0;
    for (; i + kLanes <= head_dim; i += kLanes) {
        const Vec qv = load(qh + i);
        for (int u = 0; u < 8; ++u)
            parts[u] = qv * load(k + std::size_t(u) * kv_dim + i) + parts[u];
    }
    if (i < head_dim) {
        const int rest = head_dim - i;
        const Vec qv = load_partial(qh + i, rest);
        for (int u = 0; u < 8; ++u)
            parts[u] = qv * load_partial(k + std::size_t(u) * kv_dim + i, rest) + parts[u];
    }
    return sum_lanes8(parts);
}

// out[0 .. width) = sum_s att[s] * v[s][0 .. width), width <= kLanes. Four accumulators take the
// keys s % 4 = 0..3, so consecutive keys do not wait on each other's multiply-add.
template <bool Partial>
void weighted_values(float* out, const float* att, const float* v, int n_keys, int kv_dim,
                     int width) {
    auto v_at = [&](int key) {
        const float* p = v + std::size_t(key) * kv_dim;
        return Partial ? load_partial(p, width) : load(p);
    };
    Vec acc[4] = {};
    int s = 0;
    for (; s + 4 <= n_keys; s += 4)
        for (int u = 0; u < 4; ++u) acc[u] = splat(att[s + u]) * v_at(s + u) + acc[u];
    for (int u = 0; s < n_keys; ++s, ++u) acc[u] = splat(att[s]) * v_at(s) + acc[u];
    const Vec total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    if (Partial)
        store_partial(out, total, width);
    else
        store(out, total);
}

// One query row of one head.   qh, out: [head_dim]; k, v: rows 0..n_keys-1 with stride kv_dim,
// already offset to this head's kv head; att: [n_keys] scratch, left holding the probabilities.
void one_row(float* out, const float* qh, const float* k, const float* v, float* att, int n_keys,
             int kv_dim, int head_dim) {
    const float scale = std::sqrt(static_cast<float>(head_dim));
    int s = 0;
    for (; s + 8 <= n_keys; s += 8)
        store(att + s, eight_scores(qh, k + std::size_t(s) * kv_dim, kv_dim, head_dim) / scale);
    for (; s < n_keys; ++s) att[s] = dot(qh, k + std::size_t(s) * kv_dim, head_dim) / scale;

    // softmax over the visible keys, max-subtracted for stability
    const float mx = max_of(att, n_keys);
    s = 0;
    for (; s + kLanes <= n_keys; s += kLanes) store(att + s, exp_approx(load(att + s) - mx));
    if (s < n_keys)
        store_partial(att + s, exp_approx(load_partial(att + s, n_keys - s) - mx), n_keys - s);
    const float total = sum(att, n_keys);
    for (s = 0; s < n_keys; ++s) att[s] /= total;

    int i = 0;
    for (; i + kLanes <= head_dim; i += kLanes)
        weighted_values<false>(out + i, att, v + i, n_keys, kv_dim, kLanes);
    if (i < head_dim) weighted_values<true>(out + i, att, v + i, n_keys, kv_dim, head_dim - i);
}

}  // namespace

void attention(float* out, const float* q, const float* k_cache, const float* v_cache, float* probs,
               int T, int pos0, int n_heads, int n_kv_heads, int head_dim, int threads,
               std::vector<float>& scratch) {
    const int dim = n_heads * head_dim, kv_dim = n_kv_heads * head_dim;
    const int kv_mul = n_heads / n_kv_heads, n_keys = pos0 + T;
    const double macs = 2.0 * n_heads * head_dim * (double(T) * pos0 + double(T) * (T + 1) / 2);
    const int workers = threads > 1 && macs >= kMinParallelMacs ? threads : 1;
    if (scratch.size() < std::size_t(workers) * n_keys)
        scratch.resize(std::size_t(workers) * n_keys);

    // Work items are (row t, head h); each writes only its own slice of out and probs.
    const int items = T * n_heads;
    auto run = [&](int item, float* att) {
        const int t = item / n_heads, h = item % n_heads, visible = pos0 + t + 1;
        const std::size_t kv_off = std::size_t(h / kv_mul) * head_dim;
        one_row(out + std::size_t(t) * dim + h * head_dim, q + std::size_t(t) * dim + h * head_dim,
                k_cache + kv_off, v_cache + kv_off, att, visible, kv_dim, head_dim);
        if (probs) {
            float* p = probs + (std::size_t(h) * T + t) * n_keys;
            std::memcpy(p, att, visible * sizeof(float));
            std::memset(p + visible, 0, (n_keys - visible) * sizeof(float));
        }
    };
    if (workers == 1) {
        for (int item = 0; item < items; ++item) run(item, scratch.data());
        return;
    }
#if defined(_OPENMP)
#pragma omp parallel num_threads(workers)
    {
        float* att = scratch.data() + std::size_t(omp_get_thread_num()) * n_keys;
#pragma omp for schedule(dynamic, 4)
        for (int item = 0; item < items; ++item) run(item, att);
    }
#else
    for (int item = 0; item < items; ++item) run(item, scratch.data());
#endif
}

}  // namespace kvs::cpu
