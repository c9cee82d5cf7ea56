// The matmul: out[t, i] = dot(w[i, :], x[t, :]) for every token t and output row i.
//
// Speed comes from three things, none of which changes the arithmetic of an element:
//  - lanes: each dot product keeps kLanes partial sums in one SIMD register (vec_math.h);
//  - register tiles: a tile computes R weight rows x C tokens at once, so each loaded weight
//    vector is used C times, each token vector R times, and R * C independent sums keep the FMA
//    units busy instead of waiting on one chain; the sums are reduced eight at a time
//    (sum_lanes8), sixteen on the 16-lane path where a tile holds a multiple of 16 (sum_lanes16;
//    8 tokens, a serve step of eight requests, go in 4 x 4 tiles). A batch of at least
//    kTileCols tokens uses the widest tile the path's registers hold (AVX-512: 4 x 6, 24
//    accumulators of its 32 registers; AVX2: 4 x 3 of 16); fewer tokens
//    (a decode step from the caches) use 8 x 1 or 8 x 2, whose eight rows share one reduction,
//    and one token against float32 rows a tile of 8 whose sums stay in registers
//    (tile8_f32_one: stories260K's 64 x 64 in 82 ns, a whole step's 36 matmuls in 13.5 us,
//    against 235 ns and 17.8 us through a generic tile that zeroes its accumulators on the stack;
//    docs/bench/matmul_decode_step.cpp);
//  - cache blocks: tokens go in blocks whose rows fit in L2, and each tile's few weight rows
//    (4 x n floats: 12 KiB at n = 768) stay in L1 while they are swept over the whole block, so
//    a batched prefill reads the weights from memory once per block and from L1 after that
//    (128 tokens on the 85M model's shapes, one thread of a Zen 5 guest whose measured FMA peak
//    is 198 GFLOP/s, 256 KiB token blocks: 768x768 137 GFLOP/s, 768x2048 156, 2048x768 119,
//    against 55, 58 and 53 for 8 x 2 tiles in 32 KiB blocks; AVX2 92-94 of its 100 against
//    36-41. kBlockBytes is 512 KiB, which at 128 tokens halves how often the 2048-wide matrix is
//    read from memory; docs/bench/README.md, "Prefill in register tiles");
//  - one stream for decode: a single token against a matrix too large for the caches is computed
//    one weight row after another, because the hardware prefetcher follows one sequential stream
//    at the core's full read bandwidth and eight interleaved rows at about 70% of it (measured on
//    the 85M model's matrices: 27-28 GB/s row by row, 19-20 GB/s in 8-row tiles, 14-16 GB/s in 2-
//    and 4-row tiles; docs/bench/cpu-perf-quiet-2cpu.txt), on the paths with FMA. A matrix in
//    cache keeps the tiles, whose eight independent sums hide the FMA latency. A few tokens
//    against such a matrix go in tiles (the weights read once for all of them), and each tile's
//    first pass fetches the next tile's rows as one sequential stream (8 tokens of the 85M model:
//    24.0-25.5 ms against 26.2-27.5 for its matmuls, three interleaved pairs, a shared machine).
// Every element is the same lane sum in the same order whatever the tile, block, T or thread
// count, so batched and single-token passes agree bit for bit. The weights may be compact (F16,
// BF16, Q8_0, Q4_0, K-quants: weight_rows.h): they are widened to float32 as they are loaded, and
// the sums are the same as the float32 matmul's on the dequantised matrix. (Q8_0, Q4_0 and the
// K-quants go to the integer dot products instead unless KVSCOPE_DOT=float: fast_ops.cpp.)
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/util/error.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/vec_math.h"
#include "kernels/cpu/weight_rows.h"

namespace kvs::cpu::KVS_ISA_NS {
namespace {

constexpr int kRows = 8;  // weight rows per tile for a few tokens: one sum_lanes8 per token
constexpr int kCols = 2;  // tokens per such tile: 16 accumulators
// The batch tile: R rows x C tokens, R * C accumulators plus C token vectors and one weight
// vector in the path's vector registers (32 with AVX-512, 16 with AVX2; the other paths keep
// the 8 x 2 tile, as their vectors take two registers each).
#if KVS_LANES == 16
constexpr int kTileRows = 4, kTileCols = 6;
#elif defined(__AVX2__)
constexpr int kTileRows = 4, kTileCols = 3;
#else
constexpr int kTileRows = kRows, kTileCols = kCols;
#endif
// Token rows per block: within L2 (1 MiB on Zen 4 and 5). With 256 KiB the 2048-wide w2's blocks
// would be 30 tokens, so a 128-token prefill would read each w2 from memory five times; 512 KiB
// halves that, and the 85M model's uncached 124-token pass is 4-20% faster than with 256 KiB
// (docs/bench/prefill-tiles-2cpu.txt).
constexpr std::size_t kBlockBytes = 512 * 1024;
// Below this many multiply-adds a matmul stays on the calling thread: handing rows to another
// thread costs a few microseconds, and a smaller matmul takes about that long alone.
constexpr double kMinParallelMacs = 1 << 17;
constexpr int kItemsPerThread = 8;  // row ranges per thread: a late thread leaves little behind
// From this many weights (1 MiB of float32) a matrix is read from memory at every decode step,
// not from the caches: one token against it goes row by row (see "one stream" above).
constexpr double kStreamWeights = 1 << 18;
// Only where the path has FMA: without it (sse, the page's simd128) one row's single chain of
// multiplies and adds is latency-bound, and 8-row tiles read faster (sse on the 85M model's
// matrices: 5.8 GB/s row by row against 13.8 GB/s in tiles).
#ifdef __FMA__
constexpr bool kOneStream = true;
#else
constexpr bool kOneStream = false;
#endif

VEC_INLINE Vec8 load8(const float* p) {
    Vec8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
// lo and hi as one 16-lane register: the inverse of half<0>, half<1>. (A template so that the
// 8-lane paths, where this is never called, do not compile the conversion.)
template <class V = Vec>
VEC_INLINE V join(const Vec8& lo, const Vec8& hi) {
    if constexpr (sizeof(V) == sizeof(Vec8))
        return lo + hi;
    else
        return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                                       15);
}
// Lanes 0-7 (H = 0) or 8-15 (H = 1) of a 16-lane register. (A template, as fold8 is, so that
// the branch not taken is not compiled.)
template <int H, class V = Vec>
VEC_INLINE Vec8 half(const V& v) {
    if constexpr (sizeof(V) == sizeof(Vec8))
        return v;
    else
        return __builtin_shufflevector(v, v, 8 * H + 0, 8 * H + 1, 8 * H + 2, 8 * H + 3, 8 * H + 4,
                                       8 * H + 5, 8 * H + 6, 8 * H + 7);
}

// The R x C sums of a tile into out (row t0 + c, column i0 + r), each through the lane tree of
// sum_lanes: eight at a time in sum_lanes8, taken in the order c * R + r.
template <int R, int C>
VEC_INLINE void store_tile(float* out, int d, int i0, int t0, const Vec (&acc)[C][R]) {
#if KVS_LANES == 16
    // Sixteen sums at a time where the tile has a multiple of 16, each token's R in one piece:
    // the same lane trees (sum_lanes16), in fewer instructions.
    if constexpr ((R * C) % 16 == 0 && 16 % R == 0) {
        for (int g = 0; g < R * C / 16; ++g) {
            Vec group[16];
            for (int k = 0; k < 16; ++k) group[k] = acc[(16 * g + k) / R][(16 * g + k) % R];
            float s[16];
            store(s, sum_lanes16(group));
            for (int c = 0; c < 16 / R; ++c)
                std::memcpy(out + std::size_t(t0 + 16 * g / R + c) * d + i0, s + c * R,
                            R * sizeof(float));
        }
        return;
    }
#endif
    if constexpr (R == 8) {
        for (int c = 0; c < C; ++c) store8(out + std::size_t(t0 + c) * d + i0, sum_lanes8(acc[c]));
    } else {
        constexpr int N = R * C;
        for (int g = 0; g < (N + 7) / 8; ++g) {
            Vec group[8] = {};
            for (int k = 0; k < 8 && 8 * g + k < N; ++k)
                group[k] = acc[(8 * g + k) / R][(8 * g + k) % R];
            const Vec8 s = sum_lanes8(group);
            for (int k = 0; k < 8 && 8 * g + k < N; ++k) {
                const int f = 8 * g + k;
                out[std::size_t(t0 + f / R) * d + i0 + f % R] = s[k];
            }
        }
    }
}

// out[t0 + c, i0 + r] for c < C, r < R.   x: [T, n], w: [d, n] read through W (weight_rows.h),
// out: [T, d]. The weight rows are read a step at a time (kLanes values, or one Q8_0 block),
// and each lane's sum takes its elements in increasing j whatever the step or the tile.
// `next`: float32 rows to fetch into the caches meanwhile (the next tile's R rows from memory,
// as one sequential stream), or null.
template <class W, int R, int C>
VEC_INLINE void tile(float* out, const float* x, const W& w, int n, int d, int i0, int t0,
                     const float* next = nullptr) {
    Vec acc[C][R];  // zeroed one by one: `= {}` on the array compiles to a rep stos on the stack
    for (int c = 0; c < C; ++c)
        for (int r = 0; r < R; ++r) acc[c][r] = Vec{};
    typename W::Row wr[R];
    const float* xr[C];
    for (int r = 0; r < R; ++r) wr[r] = w.row(i0 + r);
    for (int c = 0; c < C; ++c) xr[c] = x + std::size_t(t0 + c) * n;
    int j = 0;
    // Unrolled whole, so that the R x C sums stay in registers (a tile of 8 columns otherwise
    // spills them, at a third of the speed).
#pragma GCC unroll 32
    for (; j + W::kStep <= n; j += W::kStep) {
        typename W::Block blk[R];
        for (int r = 0; r < R; ++r) blk[r] = w.block(wr[r], j);
        if (next)  // R cache lines a step, the next rows' R x n floats by the tile's end
            for (int r = 0; r < R; ++r) __builtin_prefetch(next + (j / kLanes * R + r) * kLanes);
        for (int s = j; s < j + W::kStep; s += kLanes) {
            Vec xv[C];
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) xv[c] = load(xr[c] + s);
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) {
                const Vec wv = w.lanes(wr[r], blk[r], s);
#pragma GCC unroll 16
                for (int c = 0; c < C; ++c) acc[c][r] = wv * xv[c] + acc[c][r];
            }
        }
    }
    if (j < n) {  // the zero-padded last block, as in dot_lanes()
        for (int r = 0; r < R; ++r) {
            const Vec wv = w.tail(wr[r], j, n - j);
            for (int c = 0; c < C; ++c) acc[c][r] = wv * load_partial(xr[c] + j, n - j) + acc[c][r];
        }
    }
    store_tile<R, C>(out, d, i0, t0, acc);
}

// The last count < C tokens of a block against R rows: one tile of that many columns.
template <class W, int R, int C>
void tile_rest(float* out, const float* x, const W& w, int n, int d, int i0, int t0, int count,
               const float* next = nullptr) {
    if constexpr (C > 1) {
        if (count == C - 1) return tile<W, R, C - 1>(out, x, w, n, d, i0, t0, next);
        return tile_rest<W, R, C - 1>(out, x, w, n, d, i0, t0, count, next);
    }
}

// dot(w[i, :], x) in the lanes and order of dot() (vec_math.h), for the rows after the tiles.
template <class W>
float dot_row(const W& w, int i, const float* x, int n) {
    const typename W::Row r = w.row(i);
    Vec acc = {};
    int j = 0;
    for (; j + W::kStep <= n; j += W::kStep) {
        const typename W::Block b = w.block(r, j);
        for (int s = j; s < j + W::kStep; s += kLanes) acc = w.lanes(r, b, s) * load(x + s) + acc;
    }
    if (j < n) acc = w.tail(r, j, n - j) * load_partial(x + j, n - j) + acc;
    return sum_lanes(acc);
}

// dot_row for one token against a matrix read from memory. On the 16-lane path a float32 row's 16
// lane sums are kept as two 8-float halves (lanes 0-7 and 8-15, each in the same order), which is
// the same arithmetic: sum_lanes folds a 16-lane register into lo + hi first. The halves stream
// at the bandwidth the 8-lane path reaches where whole 16-float registers did not (the 85M model,
// one thread: 78 against 55 tok/s; docs/bench/cpu-perf-quiet-2cpu.txt).
template <class W>
float dot_row_streamed(const W& w, int i, const float* x, int n) {
    if constexpr (kLanes == 16 && std::is_same_v<W, F32Rows>) {
        const float* r = w.row(i);
        Vec8 lo = {}, hi = {};
        int j = 0;
        for (; j + kLanes <= n; j += kLanes) {
            lo = load8(r + j) * load8(x + j) + lo;
            hi = load8(r + j + 8) * load8(x + j + 8) + hi;
        }
        if (j < n) {  // the zero-padded last block, as in dot_lanes()
            const Vec wv = load_partial(r + j, n - j), xv = load_partial(x + j, n - j);
            lo = half<0>(wv) * half<0>(xv) + lo;
            hi = half<1>(wv) * half<1>(xv) + hi;
        }
        return sum_lanes(join(lo, hi));
    } else {
        return dot_row(w, i, x, n);
    }
}

// One token against eight float32 rows in cache, rows i0..i0+7 of out: tile<F32Rows, 8, 1>'s
// arithmetic (each lane's sum in increasing j, the zero-padded last block, one sum_lanes8) with
// the rows addressed from one pointer and the eight sums held in registers. The generic tile,
// with its array of row pointers, takes a step's 36 matmuls of stories260K in 13.5-13.8 us against
// 12.0-12.1 (docs/bench/matmul_decode_step.cpp, two interleaved pairs). (The generic tile zeroes
// its accumulators element by element: an aggregate `= {}` on the array compiles to a rep stos on
// the stack at every call.)
// With count < 8 rows left (d % 8), the missing rows repeat the first one, and only count sums
// are stored.
VEC_INLINE void tile8_f32_one(float* out, const float* x, const float* w, int n, int i0,
                              int count = 8) {
    const float* r = w + std::size_t(i0) * n;
    const std::size_t s = n;
    const float* r1 = r + (count > 1 ? s : 0);
    const float* r2 = r + (count > 2 ? 2 * s : 0);
    const float* r3 = r + (count > 3 ? 3 * s : 0);
    const float* r4 = r + (count > 4 ? 4 * s : 0);
    const float* r5 = r + (count > 5 ? 5 * s : 0);
    const float* r6 = r + (count > 6 ? 6 * s : 0);
    const float* r7 = r + (count > 7 ? 7 * s : 0);
    Vec a0 = {}, a1 = {}, a2 = {}, a3 = {}, a4 = {}, a5 = {}, a6 = {}, a7 = {};
    int j = 0;
    for (; j + kLanes <= n; j += kLanes) {
        const Vec xv = load(x + j);
        a0 = load(r + j) * xv + a0;
        a1 = load(r1 + j) * xv + a1;
        a2 = load(r2 + j) * xv + a2;
        a3 = load(r3 + j) * xv + a3;
        a4 = load(r4 + j) * xv + a4;
        a5 = load(r5 + j) * xv + a5;
        a6 = load(r6 + j) * xv + a6;
        a7 = load(r7 + j) * xv + a7;
    }
    if (j < n) {  // the zero-padded last block, as in dot_lanes()
        const int k = n - j;
        const Vec xv = load_partial(x + j, k);
        a0 = load_partial(r + j, k) * xv + a0;
        a1 = load_partial(r1 + j, k) * xv + a1;
        a2 = load_partial(r2 + j, k) * xv + a2;
        a3 = load_partial(r3 + j, k) * xv + a3;
        a4 = load_partial(r4 + j, k) * xv + a4;
        a5 = load_partial(r5 + j, k) * xv + a5;
        a6 = load_partial(r6 + j, k) * xv + a6;
        a7 = load_partial(r7 + j, k) * xv + a7;
    }
    const Vec acc[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    const Vec8 sums = sum_lanes8(acc);
    if (count == 8) return store8(out + i0, sums);
    for (int k = 0; k < count; ++k) out[i0 + k] = sums[k];
}

// Rows [i_begin, i_end) of out for tokens [t_begin, t_end).
template <class W>
void rows(float* out, const float* x, const W& w, int n, int d, int i_begin, int i_end, int t_begin,
          int t_end) {
    if (kOneStream && t_end - t_begin == 1 && double(n) * d >= kStreamWeights) {
        // One token against a matrix from memory: one weight row at a time, one stream.
        const float* xt = x + std::size_t(t_begin) * n;
        for (int i = i_begin; i < i_end; ++i)
            out[std::size_t(t_begin) * d + i] = dot_row_streamed(w, i, xt, n);
        return;
    }
    if constexpr (std::is_same_v<W, F32Rows>) {
        if (t_end - t_begin == 1) {  // one token against a matrix in cache
            const float* xt = x + std::size_t(t_begin) * n;
            float* ot = out + std::size_t(t_begin) * d;
            int i = i_begin;
            for (; i + kRows <= i_end; i += kRows) tile8_f32_one(ot, xt, w.w, n, i);
            if (i < i_end) tile8_f32_one(ot, xt, w.w, n, i, i_end - i);
            return;
        }
    }
    // A float32 matrix from memory: the first tile of each R rows fetches the next R rows.
    const bool fetch = std::is_same_v<W, F32Rows> && double(n) * d >= kStreamWeights;
    const auto sweep = [&]<int R, int C>() {  // R-row tiles over the tokens, C at a time
        int i = i_begin;
        for (; i + R <= i_end; i += R) {
            int t = t_begin;
            const float* next = nullptr;
            if constexpr (std::is_same_v<W, F32Rows>)
                if (fetch && i + 2 * R <= i_end) next = w.row(i + R);
            // C + 2 tokens left: two tiles of C - 2 and 4 instead of a full one and a thin one
            // (8 tokens in 6-wide tiles: 4 + 4, not 6 + 2: a default-model step's matmuls in
            // 85-89 us against 124-125, thread CPU time, a shared machine).
            for (; t + C <= t_end; t += C, next = nullptr) {
                if (C >= 6 && t_end - t == C + 2) break;
                tile<W, R, C>(out, x, w, n, d, i, t, next);
            }
            if constexpr (C >= 6)
                if (t_end - t > C) {
                    tile<W, R, C - 2>(out, x, w, n, d, i, t, next);
                    t += C - 2;
                    next = nullptr;
                }
            if (t < t_end) tile_rest<W, R, C>(out, x, w, n, d, i, t, t_end - t, next);
        }
        for (; i < i_end; ++i)  // the last rows (d % R), one dot at a time
            for (int t = t_begin; t < t_end; ++t)
                out[std::size_t(t) * d + i] = dot_row(w, i, x + std::size_t(t) * n, n);
    };
    // 2 to 8 tokens against a float32 matrix from memory, on the 16-lane path: every token in one
    // tile of 3 weight rows (three streams from memory; each weight read once for all the
    // tokens): 8 tokens of the 85M model in 18.5 ms against 23.9 in 4 x 4 tiles, 2 tokens in 10.8
    // against 15.9, one thread, interleaved on a shared machine.
    if constexpr (kLanes == 16 && std::is_same_v<W, F32Rows>) {
        if (kOneStream && fetch && t_end - t_begin >= 2 && t_end - t_begin <= 8) {
            switch (t_end - t_begin) {
                case 2:
                    return sweep.template operator()<3, 2>();
                case 3:
                    return sweep.template operator()<3, 3>();
                case 4:
                    return sweep.template operator()<3, 4>();
                case 5:
                    return sweep.template operator()<3, 5>();
                case 6:
                    return sweep.template operator()<3, 6>();
                case 7:
                    return sweep.template operator()<3, 7>();
                default:
                    return sweep.template operator()<3, 8>();
            }
        }
    }
    // 8 tokens (a decode step of 8 requests, in cache) on the 16-lane path: two 4 x 4 tiles
    // straight, not the 4 x 6 sweep's split into 4 + 4 (the second through tile_rest): the
    // default model's step of 29 matmuls in 88-95 us against 100-104 us, with the wide
    // reduction of store_tile (interleaved on a shared machine; docs/bench/matmul_decode_step.cpp
    // with T = 8, docs/serving.md).
    if constexpr (kLanes == 16 && std::is_same_v<W, F32Rows>)
        if (t_end - t_begin == 8) return sweep.template operator()<4, 4>();
    // 4 or 5 tokens too in the wide tile (a 4 x 4 tile, not two 8 x 2).
    if (t_end - t_begin >= std::min(kTileCols, 4))
        sweep.template operator()<kTileRows, kTileCols>();
    else
        sweep.template operator()<kRows, kCols>();
}

template <class W>
void matmul_rows(float* out, const float* x, const W& w, int T, int n, int d, ThreadPool* pool) {
    const int block = std::max<int>(
        kTileCols, int(kBlockBytes / (sizeof(float) * std::max(n, 1))) / kTileCols * kTileCols);
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

}  // namespace

void matmul(float* out, const float* x, const float* w, int T, int n, int d, ThreadPool* pool) {
    matmul_rows(out, x, F32Rows{w, n}, T, n, d, pool);
}

void matmul_compact(float* out, const float* x, GgmlType type, const unsigned char* w, int T, int n,
                    int d, ThreadPool* pool) {
    switch (type) {
        case GgmlType::F32:
            return matmul_rows(out, x, F32Rows{reinterpret_cast<const float*>(w), n}, T, n, d,
                               pool);
        case GgmlType::F16:
            return matmul_rows(out, x, F16Rows{w, n}, T, n, d, pool);
        case GgmlType::BF16:
            return matmul_rows(out, x, Bf16Rows{w, n}, T, n, d, pool);
        case GgmlType::Q8_0:
            return matmul_rows(out, x, Q8Rows{w, n}, T, n, d, pool);
        case GgmlType::Q4_0:
        case GgmlType::Q5_0:
        case GgmlType::Q5_1:
            return matmul_rows(out, x, DecodedRows<32>{w, n, type, ggml_block_bytes(type)}, T, n, d,
                               pool);
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
        case GgmlType::Q8_K:
            return matmul_rows(out, x, DecodedRows<256>{w, n, type, ggml_block_bytes(type)}, T, n,
                               d, pool);
    }
    throw Error(std::string("the CPU matmul does not read ") + ggml_type_name(type) + " weights");
}

}  // namespace kvs::cpu::KVS_ISA_NS
