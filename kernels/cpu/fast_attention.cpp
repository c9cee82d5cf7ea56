// Causal attention, per query row, as run.c defines it: scores against every visible key,
// softmax, weighted sum of the values. At position p that is, per head, 2 * p * head_dim
// multiply-adds and p exponentials, and a read of p cached K and V rows.
//
// The cache rows are [n_kv_heads * head_dim] wide, so one head reads a short slice of each row
// and touches a new cache line for every key. The heads of one row therefore go through the keys
// together, a block of keys at a time: the block's K (then V) lines come from memory once and
// serve every head while they sit in L1. Each head's arithmetic is the same sequence whatever the
// blocking: the lane sums of vec_math.h, one softmax per head, and four value accumulators that
// take the keys s % 4 = 0..3 in order (so consecutive keys do not wait on each other's
// multiply-add). Rows are independent, so a batched prefill, a single decode row and a threaded
// run give the same bits.
//
// The keys are either a contiguous cache's rows (a stride apart) or rows named one by one (a
// paged cache read in place through its block table: attention_rows). Only the address of key s
// differs; every sum is the same, so a paged cache gives the contiguous cache's bits.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/thread_pool.h"
// 8 lanes on every path, also avx512: a head is head_dim floats (8 on stories260K), and 16-lane
// blocks would be mostly padding: measured 5x slower attention there than 8 lanes. The matmul,
// whose rows are dim or hidden floats long, keeps the path's 16.
#undef KVS_LANES
#define KVS_LANES 8
#include "kernels/cpu/vec_math.h"

namespace kvs::cpu::KVS_ISA_NS {
namespace {

constexpr double kMinParallelMacs = 1 << 15;  // below this, waking threads costs more than it saves
constexpr std::size_t kBlockBytes = 16 * 1024;  // K or V rows per key block: what stays in L1

struct Shape {
    int n_heads, n_kv_heads, head_dim, kv_mul, dim, kv_dim;
    int blocks() const { return (head_dim + kLanes - 1) / kLanes; }  // kLanes-wide dim blocks
};

// Key s's K and V rows ([kv_dim] each): a contiguous cache's, `stride` floats apart.
struct StridedKeys {
    const float* k;
    const float* v;
    std::size_t stride;
    const float* k_row(int s) const { return k + std::size_t(s) * stride; }
    const float* v_row(int s) const { return v + std::size_t(s) * stride; }
};
// Key s's rows named one by one (k[s], v[s]): a paged cache's, wherever its blocks lie.
struct ListedKeys {
    const float* const* k;
    const float* const* v;
    const float* k_row(int s) const { return k[s]; }
    const float* v_row(int s) const { return v[s]; }
};

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

// Eight keys' scores at once: lane sums of q * k over the head's dimensions for keys s..s+7,
// reduced together; per key the same arithmetic as dot(qh, k, head_dim). `head`: the head's
// offset into a K row.
template <class Keys>
VEC_INLINE Vec8 eight_scores(const float* qh, const Keys& keys, int s, std::size_t head,
                             int head_dim) {
    const float* k[8];
    for (int u = 0; u < 8; ++u) k[u] = keys.k_row(s + u) + head;
    Vec parts[8] = {};
    int i = 0;
    for (; i + kLanes <= head_dim; i += kLanes) {
        const Vec qv = load(qh + i);
        for (int u = 0; u < 8; ++u) parts[u] = qv * load(k[u] + i) + parts[u];
    }
    if (i < head_dim) {
        const int rest = head_dim - i;
        const Vec qv = load_partial(qh + i, rest);
        for (int u = 0; u < 8; ++u) parts[u] = qv * load_partial(k[u] + i, rest) + parts[u];
    }
    return sum_lanes8(parts);
}

// softmax over n scores, in place, max-subtracted for stability. Its own, not core/model/softmax.h:
// it works kLanes floats at a time with the vector exp (exp_approx), which is what makes this op
// fast; the tests hold it to the reference op, which calls the one softmax. The total is sum()'s:
// the exponentials added lane-wise in the order of j as they are made (the zero-padded tail reread
// as sum() reads it), then one lane tree; each probability is that quotient, a vector at a time.
void softmax_row(float* att, int n) {
    const float mx = max_of(att, n);
    Vec acc = {};
    int s = 0;
    for (; s + kLanes <= n; s += kLanes) {
        const Vec e = exp_approx(load(att + s) - mx);
        store(att + s, e);
        acc += e;
    }
    if (s < n) {
        store_partial(att + s, exp_approx(load_partial(att + s, n - s) - mx), n - s);
        acc += load_partial(att + s, n - s);
    }
    const Vec t = splat(sum_lanes(acc));
    for (s = 0; s + kLanes <= n; s += kLanes) store(att + s, load(att + s) / t);
    if (s < n) store_partial(att + s, load_partial(att + s, n - s) / t, n - s);
}

// acc[u] += att[s] * v[s] for keys s in [s0, s1) with s % 4 == u, over one kLanes-wide block
// of a head (width floats of it at `at` into a V row; Partial when width < kLanes).
// acc_mem: [4, kLanes], carried between key blocks
template <bool Partial, class Keys>
void accumulate_values(float* acc_mem, const float* att, const Keys& keys, std::size_t at, int s0,
                       int s1, int width) {
    auto v_at = [&](int key) __attribute__((always_inline)) {
        const float* p = keys.v_row(key) + at;
        return Partial ? load_partial(p, width) : load(p);
    };
    Vec acc[4];
    for (int u = 0; u < 4; ++u) acc[u] = load(acc_mem + u * kLanes);
    int s = s0;
    for (; s + 4 <= s1; s += 4)
        for (int u = 0; u < 4; ++u) acc[u] = splat(att[s + u]) * v_at(s + u) + acc[u];
    for (; s < s1; ++s) acc[s % 4] = splat(att[s]) * v_at(s) + acc[s % 4];
    for (int u = 0; u < 4; ++u) store(acc_mem + u * kLanes, acc[u]);
}

// Query row t, heads [h0, h1) (whole kv groups), keys 0..n_keys-1.
// q_row, out_row: [dim]; att: [h1 - h0, n_keys] scratch, left holding the probabilities;
// acc: [h1 - h0, blocks, 4, kLanes] scratch.
template <class Keys>
void row_heads(float* out_row, const float* q_row, const Keys& keys, float* att, float* acc, int h0,
               int h1, int n_keys, const Shape& sh) {
    const int key_block = std::max<int>(8, int(kBlockBytes / (sizeof(float) * sh.kv_dim)) / 8 * 8);
    const float sqrt_d = std::sqrt(static_cast<float>(sh.head_dim));  // scores are q.k / sqrt_d
    // Head h's floats within a K or V row: its kv head's.
    auto head_of = [&](int h) { return std::size_t(h / sh.kv_mul) * sh.head_dim; };
    auto att_of = [&](int h) { return att + std::size_t(h - h0) * n_keys; };

    // Scores: eight keys at a time, every head over one key block before the next block.
    const int n8 = n_keys / 8 * 8;
    const Vec8 sqrt_d8 = splat<Vec8>(sqrt_d);
    for (int b0 = 0; b0 < n8; b0 += key_block) {
        const int b1 = std::min(n8, b0 + key_block);
        for (int h = h0; h < h1; ++h) {
            const float* qh = q_row + h * sh.head_dim;
            const std::size_t head = head_of(h);
            float* ah = att_of(h);
            for (int s = b0; s < b1; s += 8)
                store8(ah + s, eight_scores(qh, keys, s, head, sh.head_dim) / sqrt_d8);
        }
    }
    for (int h = h0; h < h1; ++h)
        for (int s = n8; s < n_keys; ++s)
            att_of(h)[s] =
                dot(q_row + h * sh.head_dim, keys.k_row(s) + head_of(h), sh.head_dim) / sqrt_d;

    for (int h = h0; h < h1; ++h) softmax_row(att_of(h), n_keys);

    // Values: every head's accumulators carried from one key block to the next.
    const int blocks = sh.blocks();
    auto acc_of = [&](int h, int ib) { return acc + ((h - h0) * blocks + ib) * 4 * kLanes; };
    std::fill(acc, acc + (h1 - h0) * blocks * 4 * kLanes, 0.0f);
    for (int b0 = 0; b0 < n_keys; b0 += key_block) {
        const int b1 = std::min(n_keys, b0 + key_block);
        for (int h = h0; h < h1; ++h)
            for (int ib = 0; ib < blocks; ++ib) {
                const int i = ib * kLanes, width = std::min(kLanes, sh.head_dim - i);
                if (width == kLanes)
                    accumulate_values<false>(acc_of(h, ib), att_of(h), keys, head_of(h) + i, b0, b1,
                                             width);
                else
                    accumulate_values<true>(acc_of(h, ib), att_of(h), keys, head_of(h) + i, b0, b1,
                                            width);
            }
    }
    for (int h = h0; h < h1; ++h)
        for (int ib = 0; ib < blocks; ++ib) {
            const float* a = acc_of(h, ib);
            const Vec total =
                (load(a) + load(a + kLanes)) + (load(a + 2 * kLanes) + load(a + 3 * kLanes));
            const int i = ib * kLanes, width = std::min(kLanes, sh.head_dim - i);
            store_partial(out_row + h * sh.head_dim + i, total, width);
        }
}

// Every query row over `keys` (attention's and attention_rows' shared body).
template <class Keys>
void attend_rows(float* out, const float* q, const Keys& keys, float* probs, int T, int pos0,
                 int n_heads, int n_kv_heads, int head_dim, ThreadPool* pool,
                 std::vector<float>& scratch, bool causal) {
    const Shape sh{n_heads,
                   n_kv_heads,
                   head_dim,
                   n_heads / n_kv_heads,
                   n_heads * head_dim,
                   n_kv_heads * head_dim};
    const int n_keys = pos0 + T;
    const double macs = 2.0 * n_heads * head_dim * (double(T) * pos0 + double(T) * (T + 1) / 2);
    const int workers =
        pool && pool->threads() > 1 && macs >= kMinParallelMacs ? pool->threads() : 1;
    // Work items: (row t, a range of kv groups). One range per row when rows alone keep the
    // workers busy; with fewer rows than workers, each row's kv groups are split among them.
    const int splits = std::min(n_kv_heads, T >= workers ? 1 : workers);
    const int items = T * splits;

    // Per worker: probabilities [n_heads, n_keys], then accumulators [n_heads, blocks, 4].
    const std::size_t att_floats = std::size_t(n_heads) * n_keys;
    const std::size_t acc_floats = std::size_t(n_heads) * sh.blocks() * 4 * kLanes;
    const std::size_t per_worker = att_floats + acc_floats;
    if (scratch.size() < workers * per_worker) scratch.resize(workers * per_worker);

    auto run = [&](int item, float* mine) {
        // Keys 0..pos0+t under the causal mask; every key without it.
        const int t = item / splits, part = item % splits;
        const int visible = causal ? pos0 + t + 1 : n_keys;
        const int g0 = n_kv_heads * part / splits, g1 = n_kv_heads * (part + 1) / splits;
        const int h0 = g0 * sh.kv_mul, h1 = g1 * sh.kv_mul;
        float* att = mine;
        float* acc = mine + att_floats;
        row_heads(out + std::size_t(t) * sh.dim, q + std::size_t(t) * sh.dim, keys, att, acc, h0,
                  h1, visible, sh);
        if (probs)
            for (int h = h0; h < h1; ++h) {
                float* p = probs + (std::size_t(h) * T + t) * n_keys;
                std::memcpy(p, att + std::size_t(h - h0) * visible, visible * sizeof(float));
                std::memset(p + visible, 0, (n_keys - visible) * sizeof(float));
            }
    };
    if (workers == 1) {
        for (int item = 0; item < items; ++item) run(item, scratch.data());
        return;
    }
    pool->run(items, [&](int item, int slot) { run(item, scratch.data() + slot * per_worker); });
}

}  // namespace

void attention(float* out, const float* q, const float* k_cache, const float* v_cache, float* probs,
               int T, int pos0, int n_heads, int n_kv_heads, int head_dim, ThreadPool* pool,
               std::vector<float>& scratch, bool causal) {
    const StridedKeys keys{k_cache, v_cache, std::size_t(n_kv_heads) * head_dim};
    attend_rows(out, q, keys, probs, T, pos0, n_heads, n_kv_heads, head_dim, pool, scratch, causal);
}

void attention_rows(float* out, const float* q, const float* const* k_rows,
                    const float* const* v_rows, float* probs, int T, int pos0, int n_heads,
                    int n_kv_heads, int head_dim, ThreadPool* pool, std::vector<float>& scratch,
                    bool causal) {
    const ListedKeys keys{k_rows, v_rows};
    attend_rows(out, q, keys, probs, T, pos0, n_heads, n_kv_heads, head_dim, pool, scratch, causal);
}

}  // namespace kvs::cpu::KVS_ISA_NS
