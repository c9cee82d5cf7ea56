// The matmul: out[t, i] = dot(w[i, :], x[t, :]) for every token t and output row i.
//
// Speed comes from three things, none of which changes the arithmetic of an element:
//  - lanes: each dot product keeps kLanes partial sums in one SIMD register (vec_math.h);
//  - register tiles: a tile computes 8 weight rows x C tokens at once, so each loaded weight
//    vector is used C times and 8 * C independent sums keep the FMA units busy instead of waiting
//    on one chain; the 8 sums of a token are reduced together (sum_lanes8) and stored as one
//    vector;
//  - cache blocks: tokens go in blocks whose rows fit in L1, and every weight row is swept over a
//    block while it is in cache, so a batched prefill reads the weights once per block rather than
//    once per token.
// Every element is the same lane sum in the same order whatever the tile, block, T or thread
// count, so batched and single-token passes agree bit for bit.
#include <algorithm>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/vec_math.h"

namespace kvs::cpu::KVS_ISA_NS {
namespace {

constexpr int kRows = 8;                     // weight rows per tile: one sum_lanes8
constexpr int kCols = 2;                     // tokens per tile in a batch: 16 accumulators
constexpr std::size_t kL1Bytes = 32 * 1024;  // token rows per block: what fits here
// Below this many multiply-adds a matmul stays on the calling thread: handing rows to another
// thread costs a few microseconds, and a smaller matmul takes about that long alone.
constexpr double kMinParallelMacs = 1 << 17;
constexpr int kItemsPerThread = 8;  // row ranges per thread: a late thread leaves little behind

// out[t0 + c, i0 .. i0 + 7] for c < C.   x: [T, n], w: [d, n], out: [T, d]
template <int C>
void tile(float* out, const float* x, const float* w, int n, int d, int i0, int t0) {
    Vec acc[C][kRows] = {};
    const float* wr[kRows];
    const float* xr[C];
    for (int r = 0; r < kRows; ++r) wr[r] = w + std::size_t(i0 + r) * n;
    for (int c = 0; c < C; ++c) xr[c] = x + std::size_t(t0 + c) * n;
    int j = 0;
    for (; j + kLanes <= n; j += kLanes) {
        Vec xv[C];
        for (int c = 0; c < C; ++c) xv[c] = load(xr[c] + j);
        for (int r = 0; r < kRows; ++r) {
            const Vec wv = load(wr[r] + j);
            for (int c = 0; c < C; ++c) acc[c][r] = wv * xv[c] + acc[c][r];
        }
    }
    if (j < n) {  // the zero-padded last block, as in dot_lanes()
        for (int r = 0; r < kRows; ++r) {
            const Vec wv = load_partial(wr[r] + j, n - j);
            for (int c = 0; c < C; ++c) acc[c][r] = wv * load_partial(xr[c] + j, n - j) + acc[c][r];
        }
    }
    for (int c = 0; c < C; ++c) store8(out + std::size_t(t0 + c) * d + i0, sum_lanes8(acc[c]));
}

// Rows [i_begin, i_end) of out for tokens [t_begin, t_end).
void rows(float* out, const float* x, const float* w, int n, int d, int i_begin, int i_end,
          int t_begin, int t_end) {
    int i = i_begin;
    for (; i + kRows <= i_end; i += kRows) {
        int t = t_begin;
        for (; t + kCols <= t_end; t += kCols) tile<kCols>(out, x, w, n, d, i, t);
        for (; t < t_end; ++t) tile<1>(out, x, w, n, d, i, t);
    }
    for (; i < i_end; ++i)  // the last d % 8 rows, one dot at a time
        for (int t = t_begin; t < t_end; ++t)
            out[std::size_t(t) * d + i] = dot(w + std::size_t(i) * n, x + std::size_t(t) * n, n);
}

}  // namespace

void matmul(float* out, const float* x, const float* w, int T, int n, int d, ThreadPool* pool) {
    const int block =
        std::max<int>(kCols, int(kL1Bytes / (sizeof(float) * std::max(n, 1))) / kCols * kCols);
    const bool parallel = pool && pool->threads() > 1 && double(T) * n * d >= kMinParallelMacs;
    if (!parallel) {
        for (int t0 = 0; t0 < T; t0 += block)
            rows(out, x, w, n, d, 0, d, t0, std::min(T, t0 + block));
        return;
    }
    // Items: ranges of whole 8-row tiles of the output, each swept over every token block.
    const int tiles = (d + kRows - 1) / kRows;
    const int items = std::min(tiles, kItemsPerThread * pool->threads());
    pool->run(items, [&](int item, int) {
        const int i0 = std::min(d, tiles * item / items * kRows);
        const int i1 = std::min(d, tiles * (item + 1) / items * kRows);
        for (int t0 = 0; t0 < T; t0 += block)
            rows(out, x, w, n, d, i0, i1, t0, std::min(T, t0 + block));
    });
}

}  // namespace kvs::cpu::KVS_ISA_NS
