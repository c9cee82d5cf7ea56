// The K-quant decoders, ggml's dequantize_row_q*_K written again operation for operation (the
// same products in the same order, so the same float bits: this file is compiled without
// floating-point contraction, core/CMakeLists.txt), and a plain quantiser for each.
#include "core/files/kquant_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/files/gguf_file.h"

namespace kvs {
namespace {

float h2f(std::uint16_t h) {
    return half_to_float(h);
}

void decode_q2k(const BlockQ2K& b, float* y) {
    const float d = h2f(b.d), min = h2f(b.dmin);
    const std::uint8_t* q = b.qs;
    int is = 0;
    for (int n = 0; n < kSuperBlock; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2)
            for (int half = 0; half < 2; ++half) {
                const std::uint8_t sc = b.scales[is++];
                const float dl = d * float(sc & 0xF), ml = min * float(sc >> 4);
                for (int l = 0; l < 16; ++l)
                    *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
            }
}

void decode_q3k(const BlockQ3K& b, float* y) {
    const float d = h2f(b.d);
    std::int8_t scales[16];
    q3k_scales(b.scales, scales);
    const std::uint8_t* q = b.qs;
    std::uint8_t m = 1;
    int is = 0;
    for (int n = 0; n < kSuperBlock; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2, m = std::uint8_t(m << 1))
            for (int half = 0; half < 2; ++half) {
                const float dl = d * float(scales[is++] - 32);
                for (int l = 16 * half; l < 16 * half + 16; ++l)
                    *y++ = dl * float(((q[l] >> shift) & 3) - ((b.hmask[l] & m) ? 0 : 4));
            }
}

// Q4_K and Q5_K (kHigh: the fifth bit from qh).
template <class B, bool kHigh>
void decode_q45k(const B& b, float* y) {
    const float d = h2f(b.d), min = h2f(b.dmin);
    const std::uint8_t* q = b.qs;
    for (int j = 0; j < 4; ++j, q += 32) {
        std::uint8_t sc, m;
        kquant_scale_min(2 * j, b.scales, sc, m);
        const float d1 = d * float(sc), m1 = min * float(m);
        kquant_scale_min(2 * j + 1, b.scales, sc, m);
        const float d2 = d * float(sc), m2 = min * float(m);
        for (int l = 0; l < 32; ++l) {
            int v = q[l] & 0xF;
            if constexpr (kHigh) v += (b.qh[l] >> (2 * j)) & 1 ? 16 : 0;
            *y++ = d1 * float(v) - m1;
        }
        for (int l = 0; l < 32; ++l) {
            int v = q[l] >> 4;
            if constexpr (kHigh) v += (b.qh[l] >> (2 * j + 1)) & 1 ? 16 : 0;
            *y++ = d2 * float(v) - m2;
        }
    }
}

void decode_q6k(const BlockQ6K& b, float* y) {
    const float d = h2f(b.d);
    const std::uint8_t *ql = b.ql, *qh = b.qh;
    const std::int8_t* sc = b.scales;
    for (int n = 0; n < kSuperBlock; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * float(sc[is]) * float(q1);
            y[l + 32] = d * float(sc[is + 2]) * float(q2);
            y[l + 64] = d * float(sc[is + 4]) * float(q3);
            y[l + 96] = d * float(sc[is + 6]) * float(q4);
        }
}

void decode_q8k(const BlockQ8K& b, float* y) {
    for (int j = 0; j < kSuperBlock; ++j) y[j] = b.d * float(b.qs[j]);
}

template <class B, class F>
void each_block(const unsigned char* p, std::size_t n, float* out, F decode) {
    for (std::size_t i = 0; i < n / kSuperBlock; ++i) {
        B b;
        std::memcpy(&b, p + i * sizeof(B), sizeof b);  // the file's bytes: any alignment
        decode(b, out + i * kSuperBlock);
    }
}

// ---- the quantiser: codes chosen against the rounded scales, so each value is off by at most
// half a step (plus what clamping to the code range costs).

int nearest(float v) {
    return static_cast<int>(std::nearbyint(v));
}
int clamp_code(float v, int lo, int hi) {
    return std::clamp(nearest(v), lo, hi);
}

// Affine groups (Q2_K, Q4_K, Q5_K): x ~ d * sc * q - dmin * m, q in 0..qmax, sc and m in
// 0..smax. Sets the codes L (0..qmax), the group scales and mins, d and dmin.
void affine_codes(const float* x, int groups, int qmax, int smax, std::uint8_t* L, std::uint8_t* sc,
                  std::uint8_t* m, float& d, float& dmin) {
    const int len = kSuperBlock / groups;
    float scale[16], minus_min[16], max_scale = 0, max_min = 0;
    for (int g = 0; g < groups; ++g) {
        const float* v = x + g * len;
        float lo = v[0], hi = v[0];
        for (int i = 1; i < len; ++i) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
        lo = std::min(lo, 0.0f);  // the min is subtracted: it is kept as -lo >= 0
        scale[g] = (hi - lo) / float(qmax);
        minus_min[g] = -lo;
        max_scale = std::max(max_scale, scale[g]);
        max_min = std::max(max_min, minus_min[g]);
    }
    d = max_scale / float(smax);
    dmin = max_min / float(smax);
    // The halves that are stored, and the group scales against them.
    d = half_to_float(float_to_half(d));
    dmin = half_to_float(float_to_half(dmin));
    for (int g = 0; g < groups; ++g) {
        sc[g] = std::uint8_t(d > 0 ? clamp_code(scale[g] / d, 0, smax) : 0);
        m[g] = std::uint8_t(dmin > 0 ? clamp_code(minus_min[g] / dmin, 0, smax) : 0);
        const float step = d * float(sc[g]), off = dmin * float(m[g]);
        for (int i = 0; i < len; ++i)
            L[g * len + i] =
                std::uint8_t(step > 0 ? clamp_code((x[g * len + i] + off) / step, 0, qmax) : 0);
    }
}

// Symmetric groups of 16 (Q3_K, Q6_K): x ~ d * sc * (L - half), L in 0..2 half - 1, sc a
// signed integer in -smax..smax. Sets L, the scales and d.
void symmetric_codes(const float* x, int half, int smax, std::uint8_t* L, int* sc, float& d) {
    float scale[16], max_scale = 0;
    for (int g = 0; g < 16; ++g) {
        float amax = 0, mx = 0;  // the value of largest magnitude takes the code -half
        for (int i = 0; i < 16; ++i)
            if (std::abs(x[16 * g + i]) > amax) amax = std::abs(x[16 * g + i]), mx = x[16 * g + i];
        scale[g] = mx / float(-half);
        max_scale = std::max(max_scale, std::abs(scale[g]));
    }
    d = half_to_float(float_to_half(max_scale / float(smax)));
    for (int g = 0; g < 16; ++g) {
        sc[g] = d > 0 ? clamp_code(scale[g] / d, -smax, smax) : 0;
        const float step = d * float(sc[g]);
        for (int i = 0; i < 16; ++i)
            L[16 * g + i] = std::uint8_t(
                step != 0 ? clamp_code(x[16 * g + i] / step, -half, half - 1) + half : half);
    }
}

// Byte l of a 128-value half holds values l, l+32, l+64, l+96, 2 bits each (Q2_K, Q3_K).
void pack_2bit(const std::uint8_t* L, std::uint8_t* qs) {
    for (int n = 0; n < kSuperBlock; n += 128)
        for (int l = 0; l < 32; ++l)
            qs[n / 4 + l] = std::uint8_t((L[n + l] & 3) | (L[n + l + 32] & 3) << 2 |
                                         (L[n + l + 64] & 3) << 4 | (L[n + l + 96] & 3) << 6);
}

// Q4_K's and Q5_K's 8 scales and 8 mins of 6 bits into 12 bytes (inverse of kquant_scale_min).
void pack_scale_min(const std::uint8_t* sc, const std::uint8_t* m, std::uint8_t* s) {
    std::memset(s, 0, 12);
    for (int g = 0; g < 8; ++g) {
        if (g < 4) {
            s[g] = sc[g];
            s[g + 4] = m[g];
        } else {
            s[g + 4] = std::uint8_t((sc[g] & 0xF) | ((m[g] & 0xF) << 4));
            s[g - 4] |= std::uint8_t((sc[g] >> 4) << 6);
            s[g] |= std::uint8_t((m[g] >> 4) << 6);
        }
    }
}

void encode_q2k(const float* x, BlockQ2K& b) {
    std::uint8_t L[256], sc[16], m[16];
    float d, dmin;
    affine_codes(x, 16, 3, 15, L, sc, m, d, dmin);
    for (int g = 0; g < 16; ++g) b.scales[g] = std::uint8_t(sc[g] | (m[g] << 4));
    pack_2bit(L, b.qs);
    b.d = float_to_half(d);
    b.dmin = float_to_half(dmin);
}

void encode_q3k(const float* x, BlockQ3K& b) {
    std::uint8_t L[256];
    int sc[16];
    float d;
    symmetric_codes(x, 4, 31, L, sc, d);
    std::memset(b.scales, 0, 12);
    for (int g = 0; g < 16; ++g) {
        const int l = sc[g] + 32;  // 1..63
        if (g < 8)
            b.scales[g] = std::uint8_t(l & 0xF);
        else
            b.scales[g - 8] |= std::uint8_t((l & 0xF) << 4);
        b.scales[g % 4 + 8] |= std::uint8_t((l >> 4) << (2 * (g / 4)));
    }
    std::memset(b.hmask, 0, 32);
    for (int j = 0; j < kSuperBlock; ++j)
        if (L[j] > 3) b.hmask[j % 32] |= std::uint8_t(1 << (j / 32)), L[j] -= 4;
    pack_2bit(L, b.qs);
    b.d = float_to_half(d);
}

template <class B, bool kHigh>
void encode_q45k(const float* x, B& b) {
    std::uint8_t L[256], sc[8], m[8];
    float d, dmin;
    affine_codes(x, 8, kHigh ? 31 : 15, 63, L, sc, m, d, dmin);
    pack_scale_min(sc, m, b.scales);
    if constexpr (kHigh) std::memset(b.qh, 0, 32);
    for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 32; ++l) {
            int lo = L[64 * j + l], hi = L[64 * j + 32 + l];
            if constexpr (kHigh) {
                if (lo > 15) lo -= 16, b.qh[l] |= std::uint8_t(1 << (2 * j));
                if (hi > 15) hi -= 16, b.qh[l] |= std::uint8_t(2 << (2 * j));
            }
            b.qs[32 * j + l] = std::uint8_t(lo | (hi << 4));
        }
    b.d = float_to_half(d);
    b.dmin = float_to_half(dmin);
}

void encode_q6k(const float* x, BlockQ6K& b) {
    std::uint8_t L[256];
    int sc[16];
    float d;
    symmetric_codes(x, 32, 127, L, sc, d);
    for (int g = 0; g < 16; ++g) b.scales[g] = std::int8_t(sc[g]);
    for (int n = 0; n < kSuperBlock; n += 128)
        for (int l = 0; l < 32; ++l) {
            const std::uint8_t* v = L + n + l;
            b.ql[n / 2 + l] = std::uint8_t((v[0] & 0xF) | (v[64] & 0xF) << 4);
            b.ql[n / 2 + l + 32] = std::uint8_t((v[32] & 0xF) | (v[96] & 0xF) << 4);
            b.qh[n / 4 + l] =
                std::uint8_t(v[0] >> 4 | (v[32] >> 4) << 2 | (v[64] >> 4) << 4 | (v[96] >> 4) << 6);
        }
    b.d = float_to_half(d);
}

}  // namespace

// ggml's 12-byte packing: the low nibbles of scales 0..7 in bytes 0..7 (low), of 8..15 in bytes
// 0..7 (high); the top two bits of scale g in byte 8 + g % 4, bits 2 (g / 4).
void q3k_scales(const std::uint8_t* packed, std::int8_t out[16]) {
    for (int g = 0; g < 16; ++g) {
        const int low = g < 8 ? packed[g] & 0xF : packed[g - 8] >> 4;
        const int high = (packed[8 + g % 4] >> (2 * (g / 4))) & 3;
        out[g] = static_cast<std::int8_t>(low | high << 4);
    }
}

void quantize_q8k_block(const float* x, BlockQ8K& b) {
    float max = 0, amax = 0;
    for (int j = 0; j < kSuperBlock; ++j)
        if (std::abs(x[j]) > amax) amax = std::abs(x[j]), max = x[j];
    if (amax == 0) {
        std::memset(&b, 0, sizeof b);
        return;
    }
    const float iscale = -127.0f / max;
    for (int j = 0; j < kSuperBlock; ++j)
        b.qs[j] = static_cast<std::int8_t>(std::min(127, nearest(iscale * x[j])));
    for (int g = 0; g < 16; ++g) {
        int s = 0;
        for (int i = 0; i < 16; ++i) s += b.qs[16 * g + i];
        b.bsums[g] = static_cast<std::int16_t>(s);
    }
    b.d = 1 / iscale;
}

bool is_kquant(GgmlType t) {
    switch (t) {
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
        case GgmlType::Q8_K:
            return true;
        default:
            return false;
    }
}

void dequantize_kquant(GgmlType t, const unsigned char* p, std::size_t n, float* out) {
    switch (t) {
        case GgmlType::Q2_K:
            return each_block<BlockQ2K>(p, n, out, decode_q2k);
        case GgmlType::Q3_K:
            return each_block<BlockQ3K>(p, n, out, decode_q3k);
        case GgmlType::Q4_K:
            return each_block<BlockQ4K>(p, n, out, decode_q45k<BlockQ4K, false>);
        case GgmlType::Q5_K:
            return each_block<BlockQ5K>(p, n, out, decode_q45k<BlockQ5K, true>);
        case GgmlType::Q6_K:
            return each_block<BlockQ6K>(p, n, out, decode_q6k);
        case GgmlType::Q8_K:
            return each_block<BlockQ8K>(p, n, out, decode_q8k);
        default:
            return;
    }
}

void encode_kquant(GgmlType t, const float* x, std::size_t n, unsigned char* out) {
    auto each = [&]<class B>(void (*enc)(const float*, B&)) {
        for (std::size_t i = 0; i < n / kSuperBlock; ++i) {
            B b{};
            enc(x + i * kSuperBlock, b);
            std::memcpy(out + i * sizeof(B), &b, sizeof b);
        }
    };
    switch (t) {
        case GgmlType::Q2_K:
            return each(encode_q2k);
        case GgmlType::Q3_K:
            return each(encode_q3k);
        case GgmlType::Q4_K:
            return each(encode_q45k<BlockQ4K, false>);
        case GgmlType::Q5_K:
            return each(encode_q45k<BlockQ5K, true>);
        case GgmlType::Q6_K:
            return each(encode_q6k);
        case GgmlType::Q8_K:
            return each(quantize_q8k_block);
        default:
            return;
    }
}

}  // namespace kvs
