#pragma once
// A quantised KV cache's element conversions: each K or V row (one token's kv_dim values of one
// layer) stored as kv_dim bytes, symmetric around 0, each value with a scale: the row's own
// (chosen so its largest |x| lands on the format's largest value), or one fixed in advance for a
// layer or for a channel (KvScaleMode).
//   int8:        q = round(x / scale), scale = max|x| / 127, x' = q * scale
//   fp8 (e4m3):  c = e4m3(x / scale),  scale = max|x| / 448, x' = e4m3_value(c) * scale
// e4m3 is OCP's E4M3FN: 1 sign, 4 exponent (bias 7) and 3 mantissa bits; no infinities, only
// S.1111.111 is NaN, so the largest finite value is 1.75 x 2^8 = 448 and the smallest subnormal
// 2^-9. Encoding rounds to nearest, ties to even, and saturates beyond 448 (NVIDIA's satfinite).
// The bodies are plain arithmetic on bits, marked __host__ __device__ under nvcc like the
// kernels' (kernels/cuda/portability.cuh), so a GPU kernel could call the same functions.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#if defined(__CUDACC__)
#define KVS_HOST_DEVICE __host__ __device__
#else
#define KVS_HOST_DEVICE
#endif

namespace kvs {

enum class KvCacheType { F32, Int8, Fp8 };

inline const char* kv_cache_type_name(KvCacheType t) {
    return t == KvCacheType::Int8 ? "int8" : t == KvCacheType::Fp8 ? "fp8" : "f32";
}

// The type a name (f32, int8, fp8) gives, or none for any other name.
inline std::optional<KvCacheType> kv_cache_type_named(std::string_view name) {
    for (KvCacheType t : {KvCacheType::F32, KvCacheType::Int8, KvCacheType::Fp8})
        if (name == kv_cache_type_name(t)) return t;
    return std::nullopt;
}

// Where a quantised cache's scales come from. Token: each K or V row its own, found as the row
// is stored (its largest |x| on the format's largest value). Tensor: one for each layer's K and
// one for its V, fixed before the run (vLLM's fp8 cache with calibrated k_scale and v_scale).
// ChannelK: K one per channel of each layer, fixed before the run (the axis KIVI quantises K
// along, for the few channels whose values run far larger than the rest), V one per row.
enum class KvScaleMode { Token, Tensor, ChannelK };

inline const char* kv_scale_mode_name(KvScaleMode m) {
    return m == KvScaleMode::Tensor ? "tensor" : m == KvScaleMode::ChannelK ? "channel" : "token";
}

inline std::optional<KvScaleMode> kv_scale_mode_named(std::string_view name) {
    for (KvScaleMode m : {KvScaleMode::Token, KvScaleMode::Tensor, KvScaleMode::ChannelK})
        if (name == kv_scale_mode_name(m)) return m;
    return std::nullopt;
}

// v rounded to the nearest integer, ties to even (exact for |v| < 2^23; no rounding-mode state).
KVS_HOST_DEVICE inline float round_half_even(float v) {
    const float lo = float(static_cast<long long>(v < 0 ? -v : v));
    const float frac = (v < 0 ? -v : v) - lo;
    float r = lo;
    if (frac > 0.5f || (frac == 0.5f && (static_cast<long long>(lo) & 1))) r = lo + 1;
    return v < 0 ? -r : r;
}

// The e4m3 byte nearest to x (ties to even); NaN gives 0x7F with x's sign, beyond ±448 gives ±448.
KVS_HOST_DEVICE inline std::uint8_t fp8_e4m3_encode(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const std::uint8_t sign = static_cast<std::uint8_t>((bits >> 24) & 0x80);
    const float a = x < 0 ? -x : x;
    if (a != a) return sign | 0x7F;
    if (a >= 448.0f) return sign | 0x7E;
    if (a < 0.015625f) {  // below 2^-6: a subnormal, m x 2^-9 (m = 8 is 2^-6, code 0x08)
        return sign | static_cast<std::uint8_t>(round_half_even(a * 512.0f));
    }
    int e = static_cast<int>((bits >> 23) & 0xFF) - 127;  // -6..8
    std::uint32_t m = (bits & 0x7FFFFF) >> 20;            // the top 3 mantissa bits
    const std::uint32_t rest = bits & 0xFFFFF, half = 0x80000;
    if (rest > half || (rest == half && (m & 1))) ++m;
    if (m == 8) m = 0, ++e;
    if (e > 8 || (e == 8 && m == 7)) return sign | 0x7E;  // rounded past 448
    return sign | static_cast<std::uint8_t>(((e + 7) << 3) | m);
}

KVS_HOST_DEVICE inline float fp8_e4m3_decode(std::uint8_t c) {
    const int e = (c >> 3) & 0xF, m = c & 7;
    float v;
    if (e == 15 && m == 7) {
        const std::uint32_t nan = 0x7FC00000u;
        std::memcpy(&v, &nan, sizeof v);
    } else if (e == 0) {
        v = m * (1.0f / 512.0f);
    } else {
        // (1 + m/8) x 2^(e-7), built from the exponent's bits (exact)
        const std::uint32_t pow2 = static_cast<std::uint32_t>(e - 7 + 127) << 23;
        float p;
        std::memcpy(&p, &pow2, sizeof p);
        v = (1.0f + m * 0.125f) * p;
    }
    return (c & 0x80) ? -v : v;
}

KVS_HOST_DEVICE inline std::int8_t int8_encode(float x, float inv_scale) {
    float q = round_half_even(x * inv_scale);
    q = q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q;
    return static_cast<std::int8_t>(q);
}

// The format's largest value, where a scale puts the largest |x| it is made for.
KVS_HOST_DEVICE inline float kv_type_top(KvCacheType t) {
    return t == KvCacheType::Int8 ? 127.0f : 448.0f;
}

// x [n] into q [n] bytes with scales given by their inverses: value i is x[i] * inv[i * stride]
// (stride 0: one scale for the row; 1: one per value), rounded as above; int8 beyond +-127
// clamped, fp8 beyond +-448 saturated (a scale fixed in advance may meet larger values).
KVS_HOST_DEVICE inline void quantize_fixed(KvCacheType t, const float* x, int n, const float* inv,
                                           int stride, std::uint8_t* q) {
    for (int i = 0; i < n; ++i) {
        if (t == KvCacheType::Int8) {
            const std::int8_t s = int8_encode(x[i], inv[i * stride]);
            std::memcpy(&q[i], &s, 1);
        } else {
            q[i] = fp8_e4m3_encode(x[i] * inv[i * stride]);
        }
    }
}

// q [n] bytes back into x [n]: value i times scale[i * stride].
KVS_HOST_DEVICE inline void dequantize_fixed(KvCacheType t, const std::uint8_t* q,
                                             const float* scale, int stride, int n, float* x) {
    for (int i = 0; i < n; ++i) {
        if (t == KvCacheType::Int8) {
            std::int8_t s;
            std::memcpy(&s, &q[i], 1);
            x[i] = s * scale[i * stride];
        } else {
            x[i] = fp8_e4m3_decode(q[i]) * scale[i * stride];
        }
    }
}

// The scale that puts `amax` on the format's largest value, and its inverse (0 and 0 for 0: a
// row of zeros, whose bytes are all 0).
KVS_HOST_DEVICE inline float kv_scale_for(KvCacheType t, float amax, float* inverse) {
    const float top = kv_type_top(t);
    *inverse = amax > 0 ? top / amax : 0.0f;
    return amax / top;
}

// One row with its own scale: x [n] into q [n] bytes, the row's largest |x| on the format's
// largest value; returns the scale.
KVS_HOST_DEVICE inline float quantize_row(KvCacheType t, const float* x, int n, std::uint8_t* q) {
    float amax = 0;
    for (int i = 0; i < n; ++i) {
        const float a = x[i] < 0 ? -x[i] : x[i];
        if (a > amax) amax = a;
    }
    float inv;
    const float scale = kv_scale_for(t, amax, &inv);
    quantize_fixed(t, x, n, &inv, 0, q);
    return scale;
}

// One row back: q [n] bytes and their scale into x [n].
KVS_HOST_DEVICE inline void dequantize_row(KvCacheType t, const std::uint8_t* q, float scale, int n,
                                           float* x) {
    dequantize_fixed(t, q, &scale, 0, n, x);
}

}  // namespace kvs
