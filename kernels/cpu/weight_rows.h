#pragma once
// How the matmul reads one weight row, per storage type (core/model/compact_weights.h): kLanes
// values at a time as float32, so the arithmetic after the load is the same for every type.
// Included by fast_matmul.cpp only, compiled once per SIMD path like vec_math.h.
//
// Every type's values come out exactly as core/files/gguf_file.h's dequantize_values gives them (a
// half or bfloat16 widens to float exactly; a Q8_0 value is d * q, a product of an 11-bit and an
// 8-bit integer, also exact), so a compact matmul is bit for bit the float32 matmul of the
// dequantised matrix: tests/model/test_compact_weights.cpp checks that.
//  - F32:  the floats;
//  - F16:  F16C's vcvtph2ps where the path has it (avx2, avx512), else core's half_to_float a
//          value at a time (sse, plain: the scalar fallback);
//  - BF16: the 16 bits shifted into the top of a float;
//  - Q8_0: 32-value blocks (core/files/gguf_file.h's BlockQ8_0): the block's scale d is
//          widened once per block (kStep), the int8 values converted kLanes at a time and
//          multiplied by it;
//  - Q4_0 and the K-quants: each block decoded by core's one decoder (dequantize_values) when a
//          step starts, then read kLanes at a time. Slow, and exact: the float path these types
//          keep for checking the integer dot products (quant_dot.h), which are their fast path.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/files/gguf_file.h"
#include "kernels/cpu/vec_math.h"
#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kvs::cpu::KVS_ISA_NS {
inline namespace KVS_LANES_NS {

using VecU16 = std::uint16_t __attribute__((vector_size(kLanes * sizeof(std::uint16_t))));
using VecI8 = std::int8_t __attribute__((vector_size(kLanes)));
using VecI32 = std::int32_t __attribute__((vector_size(kLanes * sizeof(std::int32_t))));

// kLanes halves at p (any alignment) to floats.
VEC_INLINE Vec halves(const unsigned char* p) {
#if defined(__AVX512F__) && KVS_LANES == 16
    // The zero-masked form with every lane selected: the same instruction, and GCC 12's plain
    // _mm512_cvtph_ps starts from _mm512_undefined_ps, which -Wmaybe-uninitialized flags.
    return (Vec)_mm512_maskz_cvtph_ps(0xffff,
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
#elif defined(__F16C__) && KVS_LANES == 8
    return (Vec)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#else
    std::uint16_t h[kLanes];
    std::memcpy(h, p, sizeof h);
    float f[kLanes];
    for (int k = 0; k < kLanes; ++k) f[k] = half_to_float(h[k]);
    return load(f);
#endif
}
VEC_INLINE float half_scale(std::uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    return half_to_float(h);
#endif
}

// Each reader: Row (a row's start), row(i), kStep (values per step: kLanes, or a Q8_0 block),
// Block (what a step needs once per row: nothing, or the scale), block(row, j) at a step's start
// j, lanes(row, block, j) for kLanes values at j inside the step, and tail(row, j, count) for
// the last count < kLanes values of a row (zero-padded, as load_partial).
struct F32Rows {
    using Row = const float*;
    struct Block {};
    static constexpr int kStep = kLanes;
    const float* w;
    int n;
    VEC_INLINE Row row(int i) const { return w + std::size_t(i) * n; }
    VEC_INLINE static Block block(Row, int) { return {}; }
    VEC_INLINE static Vec lanes(Row r, Block, int j) { return load(r + j); }
    VEC_INLINE static Vec tail(Row r, int j, int count) { return load_partial(r + j, count); }
};

// F16 and BF16: two bytes a value.
template <bool kBf16>
struct Rows16 {
    using Row = const unsigned char*;
    struct Block {};
    static constexpr int kStep = kLanes;
    const unsigned char* w;
    int n;
    VEC_INLINE Row row(int i) const { return w + std::size_t(i) * n * 2; }
    VEC_INLINE static Block block(Row, int) { return {}; }
    // kLanes values at p, read in place (one 16- or 32-byte load), to floats.
    VEC_INLINE static Vec widen(const unsigned char* p) {
        if constexpr (kBf16) {
            // zero-extend to 32 bits, shift into the top half: one instruction each on AVX2
            // and AVX-512 (GCC splits the generic conversion into two 128-bit halves)
#if defined(__AVX512F__) && KVS_LANES == 16
            const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
            return (Vec)_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h),
                                                16);  // zero-masked, all lanes: as in halves()
#elif defined(__AVX2__) && KVS_LANES == 8
            const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            return (Vec)_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
#else
            VecU16 v;
            std::memcpy(&v, p, sizeof v);
            return (Vec)(__builtin_convertvector(v, VecBits) << 16);
#endif
        } else {
            return halves(p);
        }
    }
    VEC_INLINE static Vec lanes(Row r, Block, int j) {
        return widen(r + std::size_t(j) * 2);
    }
    VEC_INLINE static Vec tail(Row r, int j, int count) {
        unsigned char h[kLanes * 2] = {};  // 0x0000 is +0 in both types
        std::memcpy(h, r + std::size_t(j) * 2, std::size_t(count) * 2);
        return widen(h);
    }
};
using F16Rows = Rows16<false>;
using Bf16Rows = Rows16<true>;

// Q8_0: rows of n / 32 blocks.
struct Q8Rows {
    using Row = const unsigned char*;
    struct Block {
        Vec d;  // the block's scale in every lane
    };
    static constexpr int kStep = 32;
    static_assert(kStep % kLanes == 0);
    const unsigned char* w;
    int n;
    VEC_INLINE Row row(int i) const { return w + std::size_t(i) * (n / 32) * sizeof(BlockQ8_0); }
    VEC_INLINE static const unsigned char* at(Row r, int j) {
        return r + std::size_t(j / 32) * sizeof(BlockQ8_0);
    }
    VEC_INLINE static Block block(Row r, int j) {
        std::uint16_t d;
        std::memcpy(&d, at(r, j) + offsetof(BlockQ8_0, d), sizeof d);
        return {splat(half_scale(d))};
    }
    VEC_INLINE static Vec lanes(Row r, const Block& b, int j) {
        const unsigned char* q = at(r, j) + offsetof(BlockQ8_0, q) + j % 32;
        return b.d * int8s(q);
    }
    // kLanes int8 at p to floats: sign-extend to int32, convert (one instruction each on AVX2
    // and AVX-512; GCC turns a direct int8-to-float vector conversion into scalar ones).
    VEC_INLINE static Vec int8s(const unsigned char* p) {
#if defined(__AVX512F__) && KVS_LANES == 16
        // zero-masked forms, all lanes selected: as in halves()
        return (Vec)_mm512_maskz_cvtepi32_ps(
            0xffff, _mm512_maskz_cvtepi8_epi32(
                        0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#elif defined(__AVX2__) && KVS_LANES == 8
        return (Vec)_mm256_cvtepi32_ps(
            _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#else
        VecI8 q;
        std::memcpy(&q, p, sizeof q);
        return __builtin_convertvector(__builtin_convertvector(q, VecI32), Vec);
#endif
    }
    // Never called: a Q8_0 row is whole blocks (core/model/compact_weights.h's kept_type).
    VEC_INLINE static Vec tail(Row, int, int) {
        return Vec{};
    }
};

// Q4_0 (kBlock 32) and the K-quants (256): rows of n / kBlock blocks of `bytes` each.
template <int kBlock>
struct DecodedRows {
    using Row = const unsigned char*;
    struct Block {
        float v[kBlock];
    };
    static constexpr int kStep = kBlock;
    static_assert(kStep % kLanes == 0);
    const unsigned char* w;
    int n;
    GgmlType type;
    std::size_t bytes;  // of one block
    VEC_INLINE Row row(int i) const { return w + std::size_t(i) * (n / kBlock) * bytes; }
    VEC_INLINE Block block(Row r, int j) const {
        Block b;
        dequantize_values(type, r + std::size_t(j / kBlock) * bytes, kBlock, b.v);
        return b;
    }
    VEC_INLINE static Vec lanes(Row, const Block& b, int j) { return load(b.v + j % kBlock); }
    // Never called: rows are whole blocks (core/model/compact_weights.h's kept_type).
    VEC_INLINE static Vec tail(Row, int, int) { return Vec{}; }
};

}  // namespace KVS_LANES_NS
}  // namespace kvs::cpu::KVS_ISA_NS
