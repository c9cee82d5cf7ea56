#pragma once
// One output of a matrix-vector product, summed by one warp: out[i] = sum_j w[i, j] * x[j], the
// weights float32, f16 or bf16 (widened to float32 as they are read; the arithmetic is float32).
//
// Reduction order (the same in every kernel that calls this, so their bits agree): the row is cut
// into chunks of kChunk(kind) values (4 floats or 8 16-bit values: 16 bytes, one vector load on
// the device), lane l sums chunks l, l + 32, l + 64, ... in increasing order, each chunk's values
// in increasing j, then the last n mod kChunk values one per lane (lane l takes the l-th); each
// term is one fused multiply-add, written out (fmaf), so no compiler contracts anything on its
// own. The 32 lane sums are then combined by warp_sum (block_phases.cuh). Only n decides the
// order: a row that is not 16-byte aligned is read with scalar loads in the same order.
#include <math.h>

#include <cstddef>
#include <cstring>

#include "kernels/cuda/block_phases.cuh"

namespace kvs::kern {

// How a matrix's values are stored (core/files/gguf_file.h's F32, F16, BF16).
enum WeightKind : int { kWeightF32 = 0, kWeightF16 = 1, kWeightBF16 = 2 };

// A matrix [rows, n] in device memory, row-major.
struct MatrixRef {
    const void* data = nullptr;
    int kind = kWeightF32;
    MatrixRef() = default;
    __host__ __device__ MatrixRef(const float* f) : data(f) {}  // float32, the common case
    __host__ __device__ MatrixRef(const void* p, int k) : data(p), kind(k) {}
};

__host__ __device__ inline std::size_t weight_row_bytes(int kind, int n) {
    return std::size_t(n) * (kind == kWeightF32 ? 4u : 2u);
}

__host__ __device__ inline float float_from_bits(unsigned u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

__host__ __device__ inline float bf16_to_float(unsigned short h) {
    return float_from_bits(unsigned(h) << 16);
}

// IEEE half to float, exactly (every half is a float): integer work, the same on every side.
__host__ __device__ inline float f16_to_float(unsigned short h) {
    const unsigned sign = unsigned(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1fu) return float_from_bits(sign | 0x7f800000u | (mant << 13));  // inf, NaN
    if (exp != 0) return float_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
    const float sub = static_cast<float>(mant) * 5.9604644775390625e-08f;  // mant * 2^-24, exact
    return sign ? -sub : sub;
}

// Value j of row `row` of m, widened to float32.
__host__ __device__ inline float weight_at(const MatrixRef& m, std::size_t row, int n, int j) {
    const std::size_t e = row * std::size_t(n) + std::size_t(j);
    if (m.kind == kWeightF32) return static_cast<const float*>(m.data)[e];
    const unsigned short h = static_cast<const unsigned short*>(m.data)[e];
    return m.kind == kWeightBF16 ? bf16_to_float(h) : f16_to_float(h);
}

// The Chunk values of chunk c of a row of Kind, widened: 16 bytes, one load where the row is
// 16-byte aligned. Chunk and Kind are compile-time constants, so v stays in registers.
template <int Kind>
struct WeightChunk {
    static constexpr unsigned size = Kind == kWeightF32 ? 4u : 8u;
};

template <int Kind>
__host__ __device__ inline void load_chunk(const void* row, unsigned c,
                                           float (&v)[WeightChunk<Kind>::size]) {
    if constexpr (Kind == kWeightF32) {
        const float* p = static_cast<const float*>(row) + std::size_t(c) * 4;
#if defined(__CUDA_ARCH__)
        if ((reinterpret_cast<std::size_t>(p) & 15u) == 0) {
            const float4 f = *reinterpret_cast<const float4*>(p);
            v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
            return;
        }
#endif
        for (int k = 0; k < 4; ++k) v[k] = p[k];
    } else {
        const unsigned short* p = static_cast<const unsigned short*>(row) + std::size_t(c) * 8;
        unsigned short h[8];
#if defined(__CUDA_ARCH__)
        if ((reinterpret_cast<std::size_t>(p) & 15u) == 0) {
            const uint4 u = *reinterpret_cast<const uint4*>(p);
            const unsigned w[4] = {u.x, u.y, u.z, u.w};
            for (int k = 0; k < 4; ++k) {
                h[2 * k] = static_cast<unsigned short>(w[k] & 0xffffu);
                h[2 * k + 1] = static_cast<unsigned short>(w[k] >> 16);
            }
        } else {
            for (int k = 0; k < 8; ++k) h[k] = p[k];
        }
#else
        for (int k = 0; k < 8; ++k) h[k] = p[k];
#endif
        for (int k = 0; k < 8; ++k)
            v[k] = Kind == kWeightBF16 ? bf16_to_float(h[k]) : f16_to_float(h[k]);
    }
}

template <int Kind, class X>
__host__ __device__ inline float weight_row_lane_sum_of(const void* row, int n, unsigned lane,
                                                        const X& xat, bool reversed) {
    constexpr unsigned chunk = WeightChunk<Kind>::size;
    const unsigned chunks = static_cast<unsigned>(n) / chunk;
    float s = 0.0f;
    const unsigned mine = chunks > lane ? (chunks - lane + kWarpSize - 1) / kWarpSize : 0;
    for (unsigned k = 0; k < mine; ++k) {
        const unsigned c = lane + kWarpSize * (reversed ? mine - 1 - k : k);
        float v[chunk];
        load_chunk<Kind>(row, c, v);
        const int j0 = static_cast<int>(c * chunk);
        for (unsigned e = 0; e < chunk; ++e) s = fmaf(v[e], xat(j0 + static_cast<int>(e)), s);
    }
    const int j = static_cast<int>(chunks * chunk + lane);
    if (j < n) s = fmaf(weight_at(MatrixRef(row, Kind), 0, n, j), xat(j), s);
    return s;
}

// Lane `lane`'s share of one row's dot product with x, in the order above; xat(j) gives x[j] (a
// plain read, or a value computed on the fly, e.g. RMSNorm's output). `reversed` (a test switch,
// never set by the backends) sums the lane's chunks in decreasing order instead: another
// reduction order, which tests/cuda/test_cuda_fused.cpp uses to show its bit-for-bit check failing.
template <class X>
__host__ __device__ inline float weight_row_lane_sum(const void* row, int kind, int n,
                                                     unsigned lane, const X& xat,
                                                     bool reversed = false) {
    if (kind == kWeightF32) return weight_row_lane_sum_of<kWeightF32>(row, n, lane, xat, reversed);
    if (kind == kWeightF16) return weight_row_lane_sum_of<kWeightF16>(row, n, lane, xat, reversed);
    return weight_row_lane_sum_of<kWeightBF16>(row, n, lane, xat, reversed);
}

// Row i of m ([rows, n]).
__host__ __device__ inline const void* weight_row(const MatrixRef& m, std::size_t i, int n) {
    return static_cast<const char*>(m.data) + i * weight_row_bytes(m.kind, n);
}

}  // namespace kvs::kern
