#pragma once
// The arithmetic the fast CPU ops share. Every reduction here has a fixed order that depends only
// on the length of what is reduced, never on how many rows or threads a call has: that is what
// keeps a batched prefill, a single decode row and a threaded run bit-identical.
//
// A sum of n products keeps kLanes partial sums: lane k takes the elements j with
// j % kLanes == k (the last partial block zero-padded), then the lanes are added in one fixed
// tree: with 16 lanes first l + l(+8) (to 8), then ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 +
// l7)). The lanes do not depend on each other, so they live in one SIMD register; -ffast-math
// (which would let the compiler reorder any sum) is not needed.
//
// This header is compiled once per SIMD path (kernels/CMakeLists.txt, isa.h): KVS_ISA_NS names
// the path's namespace, so the inline functions of one path never stand in for another's at link
// time, and KVS_LANES is 16 on the AVX-512 path, 8 elsewhere. A file compiled outside those
// builds (a test) gets the 8-lane version of its own flags, in namespace isa_default.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

// On the paths without AVX (sse, plain), a 32-byte vector crossing a call has another ABI than
// with AVX, and GCC says so twice: a note for a vector *parameter* passed by value ("the ABI for
// passing parameters with 32-byte alignment has changed in GCC 4.6"), which no pragma silences,
// and a -Wpsabi warning for a vector *returned* by value. The helpers below take vectors by const
// reference (no note: a reference is a pointer in any ABI) and are always inlined (VEC_INLINE),
// so no vector crosses a real call; the return warning is switched off for the files that
// include this header, and only there. A by-value Vec parameter added here brings the note back
// on the sse build.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define VEC_INLINE inline __attribute__((always_inline))

#ifndef KVS_ISA_NS
#define KVS_ISA_NS isa_default
#endif
#ifndef KVS_LANES
#define KVS_LANES 8
#endif

// The lane count is part of the namespace too (inline: invisible to the code that uses it), so a
// file of one path that picks 8 lanes (fast_attention.cpp) and one that keeps 16 never share a
// definition.
#if KVS_LANES == 16
#define KVS_LANES_NS lanes16
#else
#define KVS_LANES_NS lanes8
#endif
namespace kvs::cpu::KVS_ISA_NS {
inline namespace KVS_LANES_NS {

constexpr int kLanes = KVS_LANES;  // 8 or 16: the lane trees below are written for these
static_assert(kLanes == 8 || kLanes == 16);

// kLanes floats in one SIMD register, through the vector extension of GCC and Clang: + - * on
// it are single instructions (one AVX-512 or AVX register, two SSE or NEON registers
// otherwise; two v128 registers on the web page's simd128 path). a * b + c compiles to one FMA
// where the target has it (both compilers contract it by default; WebAssembly SIMD128 has none,
// like the sse path); either way every element below goes through the same expression.
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));
using VecBits = std::uint32_t __attribute__((vector_size(kLanes * sizeof(float))));
using Vec8 = float __attribute__((vector_size(8 * sizeof(float))));  // one result per tile row

VEC_INLINE Vec load(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
// The first `count` (<= kLanes) floats at p, the other lanes 0; and the store that writes only
// them. Copied in pieces of 16, 8, 4, 2 and 1 floats: fixed-size copies compile to single
// moves, while a loop or memcpy of variable size becomes a library call (GCC turns such loops
// into memcpy), which clobbers every SIMD register in the middle of a kernel.
VEC_INLINE Vec load_partial(const float* p, int count) {
#if defined(__AVX512F__) && KVS_LANES == 16
    // One masked load (the lanes past count read as 0, nothing past p + count is touched): the
    // same value as the pieces below at a fraction of the cost, on every tail of a row.
    return (Vec)_mm512_maskz_loadu_ps((1u << count) - 1, p);
#endif
    float lanes[kLanes] = {};
    int k = 0;
    for (int piece : {16, 8, 4, 2, 1})  // count = the sum of some of these
        if (piece <= kLanes && (count & piece)) {
            std::memcpy(lanes + k, p + k, piece * sizeof(float));
            k += piece;
        }
    return load(lanes);
}
VEC_INLINE void store(float* p, const Vec& v) {
    std::memcpy(p, &v, sizeof v);
}
VEC_INLINE void store_partial(float* p, const Vec& v, int count) {
#if defined(__AVX512F__) && KVS_LANES == 16
    return _mm512_mask_storeu_ps(p, (1u << count) - 1, (__m512)v);
#endif
    float lanes[kLanes];
    store(lanes, v);
    int k = 0;
    for (int piece : {16, 8, 4, 2, 1})
        if (piece <= kLanes && (count & piece)) {
            std::memcpy(p + k, lanes + k, piece * sizeof(float));
            k += piece;
        }
}
// x in every lane (a broadcast; Vec{} + x would be an add, which may not be dropped: 0 + -0 =
// 0)
template <class V = Vec>
VEC_INLINE V splat(float x) {
    if constexpr (sizeof(V) == sizeof(Vec8))
        return V{x, x, x, x, x, x, x, x};
    else
        return V{x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
}
VEC_INLINE void store8(float* p, const Vec8& v) {
    std::memcpy(p, &v, sizeof v);
}

// The first step of the lane tree: 16 lanes to 8 (l + l(+8)); nothing to do at 8 lanes.
// (A template so that the branch not taken is not compiled.)
template <class V = Vec>
VEC_INLINE Vec8 fold8(const V& v) {
    if constexpr (sizeof(V) == sizeof(Vec8))
        return v;
    else
        return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
               __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
}

// The lane tree of one register: fold8, then ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
VEC_INLINE float sum_lanes(const Vec& v) {
    const Vec8 e = fold8(v);
    return ((e[0] + e[1]) + (e[2] + e[3])) + ((e[4] + e[5]) + (e[6] + e[7]));
}

// The lane trees of eight registers at once: result lane r = sum_lanes(v[r]), in the same
// order, with 7 shuffle-and-add steps (after fold8) instead of 8 scalar trees.
VEC_INLINE Vec8 sum_lanes8(const Vec (&wide)[8]) {
    Vec8 v[8];
    for (int r = 0; r < 8; ++r) v[r] = fold8(wide[r]);
    // pairs: [a0+a1, a2+a3, b0+b1, b2+b3, a4+a5, a6+a7, b4+b5, b6+b7]
    auto pairs = [](const Vec8& a, const Vec8& b) __attribute__((always_inline)) {
        return __builtin_shufflevector(a, b, 0, 2, 8, 10, 4, 6, 12, 14) +
               __builtin_shufflevector(a, b, 1, 3, 9, 11, 5, 7, 13, 15);
    };
    const Vec8 q01 = pairs(pairs(v[0], v[1]), pairs(v[2], v[3]));  // rows 0-3: low, high halves
    const Vec8 q45 = pairs(pairs(v[4], v[5]), pairs(v[6], v[7]));  // rows 4-7
    return __builtin_shufflevector(q01, q45, 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(q01, q45, 4, 5, 6, 7, 12, 13, 14, 15);
}

#if KVS_LANES == 16
// The lane trees of sixteen registers at once, on the 16-lane path: result lane r =
// sum_lanes(v[r]), the same additions as sum_lanes8 on v[0..7] (lanes 0-7) and on v[8..15]
// (lanes 8-15), each shuffle and add working on both halves of a register. 45 instructions for
// 16 sums where two sum_lanes8 take 74 (their fold8 extracts and adds a 256-bit half per
// register): what a batched tile's reduction costs when each sum has only n / 16 = 8 products
// (the default model's dim of 128).
VEC_INLINE Vec sum_lanes16(const Vec (&v)[16]) {
    // x[i] = [fold8(v[i]) | fold8(v[i + 8])]
    Vec x[8];
    for (int i = 0; i < 8; ++i)
        x[i] = __builtin_shufflevector(v[i], v[i + 8], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20,
                                       21, 22, 23) +
               __builtin_shufflevector(v[i], v[i + 8], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27,
                                       28, 29, 30, 31);
    // sum_lanes8's pairs(a, b) in each 8-lane half
    auto pairs = [](const Vec& a, const Vec& b) __attribute__((always_inline)) {
        return __builtin_shufflevector(a, b, 0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28,
                                       30) +
               __builtin_shufflevector(a, b, 1, 3, 17, 19, 5, 7, 21, 23, 9, 11, 25, 27, 13, 15, 29,
                                       31);
    };
    const Vec q01 = pairs(pairs(x[0], x[1]), pairs(x[2], x[3]));
    const Vec q45 = pairs(pairs(x[4], x[5]), pairs(x[6], x[7]));
    return __builtin_shufflevector(q01, q45, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26,
                                   27) +
           __builtin_shufflevector(q01, q45, 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30,
                                   31);
}
#endif

// Lane partial sums of a[j] * b[j], j < n.
VEC_INLINE Vec dot_lanes(const float* a, const float* b, int n) {
    Vec acc = {};
    int j = 0;
    for (; j + kLanes <= n; j += kLanes) acc = load(a + j) * load(b + j) + acc;
    if (j < n) acc = load_partial(a + j, n - j) * load_partial(b + j, n - j) + acc;
    return acc;
}
VEC_INLINE float dot(const float* a, const float* b, int n) {
    return sum_lanes(dot_lanes(a, b, n));
}

// sum_j a[j]^2, j < n, as ggml's rms_norm sums it: each square rounded to float, the squares
// added in double. A float sum of the lanes moves the mean by an ulp now and then; the RMSNorm's
// scale then moves the normed row by an ulp, and where a value of that row, scaled for Q8_K, lies
// at a tie (63.4999962 for ggml, 63.5 for the float sum) the integer paths' int8 is one step off
// (tests/files/test_kquants.cpp). kLanes double partial sums, added in one fixed order: a double
// sum of float squares differs from ggml's sequential one only far below the float the mean is
// rounded to.
VEC_INLINE double sum_squares(const float* a, int n) {
    using VecD = double __attribute__((vector_size(kLanes * sizeof(double))));
    VecD acc = {};
    int j = 0;
    for (; j + kLanes <= n; j += kLanes) {
        const Vec v = load(a + j);
        acc += __builtin_convertvector(v * v, VecD);  // the product rounded to float first
    }
    if (j < n) {
        const Vec v = load_partial(a + j, n - j);
        acc += __builtin_convertvector(v * v, VecD);
    }
    double s = 0;
    for (int k = 0; k < kLanes; ++k) s += acc[k];
    return s;
}

// sum_j a[j], j < n, in lanes.
VEC_INLINE float sum(const float* a, int n) {
    Vec acc = {};
    int j = 0;
    for (; j + kLanes <= n; j += kLanes) acc += load(a + j);
    if (j < n) acc += load_partial(a + j, n - j);
    return sum_lanes(acc);
}

// exp(x) lane by lane, with plain vector operations (a libm call would go one float at a time).
// exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln2 / 2, exp(r) by its Taylor polynomial
// to degree 7 (truncation error below 1e-8). Inputs are clamped to [-87, 88] so 2^n stays a
// normal float: below -87 the result is 1.6e-38 where std::exp gives a denormal or 0, which
// changes a softmax or SiLU by less than 1e-37. tests/kernels/test_cpu_ops.cpp measures the error
// against std::exp.
VEC_INLINE Vec exp_approx(const Vec& in) {
    Vec x = in;
    x = x < -87.0f ? splat(-87.0f) : x;
    x = x > 88.0f ? splat(88.0f) : x;
    constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
    const Vec shifted = x * 1.44269504088896341f + kShifter;
    const Vec n = shifted - kShifter;
    // r = x - n ln2, with ln2 split in two so n * ln2_hi is exact
    Vec r = n * -0.693145751953125f + x;
    r = n * -1.428606765330187e-06f + r;
    Vec p = splat(1.0f / 5040.0f);
    for (float c : {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f}) p = p * r + c;
    // 2^n: the integer n (the low bits of `shifted`) plus the bias 127, into the exponent field
    const VecBits e = ((VecBits)shifted - __builtin_bit_cast(std::uint32_t, kShifter) + 127u) << 23;
    return p * (Vec)e;
}

}  // namespace KVS_LANES_NS
}  // namespace kvs::cpu::KVS_ISA_NS
