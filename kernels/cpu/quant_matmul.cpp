// The integer dot products of quant_dot.h, built once per path (kernels/CMakeLists.txt) into
// namespace kvs::cpu::KVS_DOT_NS with KVS_DOT_LEVEL 0 (scalar), 1 (avx2), 2 (avxvnni) or 3
// (avx512vnni).
//
// Per weight row and token, per block: an exact integer sum of products, then one float
// multiply-add by the scales. For the K-quants a super-block is unpacked into 8 vectors of 32
// unsigned codes in value order (the 4-bit, 5-bit, 6-bit, 3-bit or 2-bit codes, each type's own
// bit layout, core/files/kquant_blocks.h) with 16 int16 group scales, and every type then shares
// one sum:  dot = da * (dmul * S1 - mmul * S2) (for Q6_K and Q3_K, whose mmul is dmul: da * dmul *
// (S1 - S2), the difference taken in integers),  S1 = sum_g sc_g * sum_{i in g} q_i a_i (the codes
// times the int8 activations, u8 x s8 pairs, scaled per group of 16), S2 = sum_g k_g * bsum_g (the
// offset each type subtracts: Q4_K's mins, Q6_K's 32 * sc, Q3_K's 4 * sc, with the activations'
// group sums that Q8_K carries). Q8_0 and Q4_0 take ggml's sign trick: |w| as the unsigned factor,
// a with w's sign as the signed one.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/files/kquant_blocks.h"
#include "kernels/cpu/quant_dot.h"
#include "kernels/cpu/thread_pool.h"
#if KVS_DOT_LEVEL >= 1
#include <immintrin.h>
#endif

namespace kvs::cpu::KVS_DOT_NS {
namespace {

constexpr double kMinParallelMacs = 1 << 17;  // as the float matmul: below, one thread
constexpr int kItemsPerThread = 8;

// ---- activations: one token's row of n floats as int8 blocks ----

// ggml's nearest_int: round to nearest even through the float adder (|v| < 2^22).
inline int round_even(float v) {
    const float f = v + 12582912.0f;
    std::int32_t i;
    std::memcpy(&i, &f, 4);
    return (i & 0x007fffff) - 0x00400000;
}

inline float half_bits_to_float(const unsigned char* p) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
#if KVS_DOT_LEVEL >= 1
    return _cvtsh_ss(h);
#else
    return half_to_float(h);
#endif
}

// Quantised activations of T rows: q [T, n]; d [T, n / block]; bsums [T, n / 16] (Q8_K).
struct Acts {
    std::vector<std::int8_t> q;
    std::vector<float> d;
    std::vector<std::int16_t> bsums;
    // The 512-bit Q4_K / Q5_K dot (avx512vnni only): q in the order a 64-byte load of a
    // super-block's nibbles gives its values, per 128-value half the 32-value chunks 0, 2, 1, 3
    // (low nibbles of bytes 0..63 are values 0..31 and 64..95), and the sums of 32 q at a time.
    std::vector<std::int8_t> qn;
    std::vector<std::int16_t> bsums32;
};

constexpr bool kNibbleOrder = KVS_DOT_LEVEL == 3;
bool nibble_order(GgmlType t) {
    return kNibbleOrder && (t == GgmlType::Q4_K || t == GgmlType::Q5_K);
}

// Q8_0 as ggml's x86 quantize_row_q8_0: d = max|x| / 127 stored as a half, q = round(x * 127 /
// max|x|) to nearest even.
void quantize_q8_0(const float* x, int n, std::int8_t* q, float* d) {
    for (int b = 0; b < n / 32; ++b) {
        const float* v = x + 32 * b;
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(v[j]));
        d[b] = half_to_float(float_to_half(amax / 127.0f));
        const float id = amax != 0 ? 127.0f / amax : 0.0f;
        for (int j = 0; j < 32; ++j)
            q[32 * b + j] = static_cast<std::int8_t>(round_even(v[j] * id));
    }
}

// Q8_K as ggml's quantize_row_q8_K_ref (core/files/kquant_blocks.h's quantize_q8k_block, written so
// the loops vectorise): the first value of largest magnitude becomes -127.
void quantize_q8_k(const float* x, int n, std::int8_t* q, float* d, std::int16_t* bsums) {
    for (int b = 0; b < n / kSuperBlock; ++b) {
        const float* v = x + kSuperBlock * b;
        std::int8_t* qb = q + kSuperBlock * b;
        float amax = 0;
        for (int j = 0; j < kSuperBlock; ++j) amax = std::max(amax, std::fabs(v[j]));
        int at = 0;
        while (at < kSuperBlock && std::fabs(v[at]) != amax) ++at;
        if (amax == 0 || at == kSuperBlock) {  // zeros (or NaN): a block of zeros, as ggml's
            std::memset(qb, 0, kSuperBlock);
            std::memset(bsums + 16 * b, 0, 16 * sizeof(std::int16_t));
            d[b] = 0;
            continue;
        }
        const float iscale = -127.0f / v[at];
        for (int j = 0; j < kSuperBlock; ++j)
            qb[j] = static_cast<std::int8_t>(std::min(127, round_even(iscale * v[j])));
        for (int g = 0; g < 16; ++g) {
            int s = 0;
            for (int i = 0; i < 16; ++i) s += qb[16 * g + i];
            bsums[16 * b + g] = static_cast<std::int16_t>(s);
        }
        d[b] = 1 / iscale;
    }
}

bool super_blocks(GgmlType t) {
    return t != GgmlType::Q8_0 && t != GgmlType::Q4_0;
}

void quantize_rows(const float* x, GgmlType type, int T, int n, Acts& a) {
    const int block = super_blocks(type) ? kSuperBlock : 32;
    a.q.resize(std::size_t(T) * n);
    a.d.resize(std::size_t(T) * (n / block));
    if (block == kSuperBlock) a.bsums.resize(std::size_t(T) * (n / 16));
    for (int t = 0; t < T; ++t) {
        const float* xt = x + std::size_t(t) * n;
        std::int8_t* q = a.q.data() + std::size_t(t) * n;
        float* d = a.d.data() + std::size_t(t) * (n / block);
        if (block == kSuperBlock)
            quantize_q8_k(xt, n, q, d, a.bsums.data() + std::size_t(t) * (n / 16));
        else
            quantize_q8_0(xt, n, q, d);
    }
    if (!nibble_order(type)) return;
    a.qn.resize(a.q.size());
    a.bsums32.resize(a.bsums.size() / 2);
    for (std::size_t h = 0; h < a.q.size() / 128; ++h)  // 128-value halves
        for (int c = 0; c < 4; ++c)
            std::memcpy(a.qn.data() + 128 * h + 32 * c,
                        a.q.data() + 128 * h + 32 * (c % 2 * 2 + c / 2), 32);
    for (std::size_t g = 0; g < a.bsums32.size(); ++g)
        a.bsums32[g] = std::int16_t(a.bsums[2 * g] + a.bsums[2 * g + 1]);
}

// One token's quantised row, as the dots read it.
struct ActRow {
    const std::int8_t* q;
    const float* d;
    const std::int16_t* bsums;
    const std::int8_t* qn;  // nibble order and 32-value sums (Acts), where kept
    const std::int16_t* bsums32;
};

#if KVS_DOT_LEVEL == 0
// ---- the scalar path: every type through one unpacked super-block ----

// A K-quant super-block as codes and group factors (see the file's comment).
struct Unpacked {
    std::uint8_t q[kSuperBlock];
    int sc[16], k[16];
    float dmul, mmul;
};

// Loops over whole 32-value chunks (no division per value), which the compiler vectorises.
void unpack_scalar(GgmlType t, const unsigned char* p, Unpacked& u) {
    switch (t) {
        case GgmlType::Q2_K:
        case GgmlType::Q3_K: {
            const bool q3 = t == GgmlType::Q3_K;
            BlockQ2K b2;
            BlockQ3K b3;
            const std::uint8_t* qs;
            if (q3)
                std::memcpy(&b3, p, sizeof b3), qs = b3.qs;
            else
                std::memcpy(&b2, p, sizeof b2), qs = b2.qs;
            for (int n = 0; n < 2; ++n)      // 128-value halves
                for (int c = 0; c < 4; ++c)  // 32-value chunks: 2 bits each of the same bytes
                    for (int l = 0; l < 32; ++l) {
                        int v = (qs[32 * n + l] >> (2 * c)) & 3;
                        if (q3) v |= ((b3.hmask[l] >> (4 * n + c)) & 1) << 2;
                        u.q[128 * n + 32 * c + l] = std::uint8_t(v);
                    }
            if (q3) {
                std::int8_t s[16];
                q3k_scales(b3.scales, s);
                for (int g = 0; g < 16; ++g) u.sc[g] = s[g] - 32, u.k[g] = 4 * (s[g] - 32);
                u.dmul = u.mmul = half_to_float(b3.d);
            } else {
                for (int g = 0; g < 16; ++g)
                    u.sc[g] = b2.scales[g] & 0xF, u.k[g] = b2.scales[g] >> 4;
                u.dmul = half_to_float(b2.d), u.mmul = half_to_float(b2.dmin);
            }
            return;
        }
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: {
            const bool q5 = t == GgmlType::Q5_K;
            BlockQ5K b5;
            BlockQ4K b4;
            const std::uint8_t *qs, *scales;
            std::uint16_t d, dmin;
            if (q5) {
                std::memcpy(&b5, p, sizeof b5);
                qs = b5.qs, scales = b5.scales, d = b5.d, dmin = b5.dmin;
            } else {
                std::memcpy(&b4, p, sizeof b4);
                qs = b4.qs, scales = b4.scales, d = b4.d, dmin = b4.dmin;
            }
            for (int c = 0; c < 4; ++c)  // 64 values: 32 low nibbles, then 32 high nibbles
                for (int l = 0; l < 32; ++l) {
                    int lo = qs[32 * c + l] & 0xF, hi = qs[32 * c + l] >> 4;
                    if (q5) {
                        lo |= ((b5.qh[l] >> (2 * c)) & 1) << 4;
                        hi |= ((b5.qh[l] >> (2 * c + 1)) & 1) << 4;
                    }
                    u.q[64 * c + l] = std::uint8_t(lo);
                    u.q[64 * c + 32 + l] = std::uint8_t(hi);
                }
            for (int g = 0; g < 8; ++g) {
                std::uint8_t sc, m;
                kquant_scale_min(g, scales, sc, m);
                u.sc[2 * g] = u.sc[2 * g + 1] = sc;
                u.k[2 * g] = u.k[2 * g + 1] = m;
            }
            u.dmul = half_to_float(d), u.mmul = half_to_float(dmin);
            return;
        }
        case GgmlType::Q6_K: {
            BlockQ6K b;
            std::memcpy(&b, p, sizeof b);
            for (int n = 0; n < 2; ++n)
                for (int l = 0; l < 32; ++l) {
                    const std::uint8_t l0 = b.ql[64 * n + l], l1 = b.ql[64 * n + 32 + l];
                    const std::uint8_t h = b.qh[32 * n + l];
                    std::uint8_t* q = u.q + 128 * n + l;
                    q[0] = std::uint8_t((l0 & 0xF) | (h & 3) << 4);
                    q[32] = std::uint8_t((l1 & 0xF) | ((h >> 2) & 3) << 4);
                    q[64] = std::uint8_t((l0 >> 4) | ((h >> 4) & 3) << 4);
                    q[96] = std::uint8_t((l1 >> 4) | ((h >> 6) & 3) << 4);
                }
            for (int g = 0; g < 16; ++g) u.sc[g] = b.scales[g], u.k[g] = 32 * b.scales[g];
            u.dmul = u.mmul = half_to_float(b.d);
            return;
        }
        default:
            return;
    }
}

float dot_row(GgmlType t, const unsigned char* w, const ActRow& a, int n) {
    float sum = 0;
    if (t == GgmlType::Q8_0 || t == GgmlType::Q4_0) {
        const std::size_t bytes = ggml_block_bytes(t);
        for (int b = 0; b < n / 32; ++b, w += bytes) {
            int s = 0;
            for (int j = 0; j < 32; ++j) {
                const int v = t == GgmlType::Q8_0
                                  ? static_cast<std::int8_t>(w[2 + j])
                                  : (j < 16 ? w[2 + j] & 0xF : w[2 + j - 16] >> 4) - 8;
                s += v * a.q[32 * b + j];
            }
            sum += float(s) * (half_bits_to_float(w) * a.d[b]);
        }
        return sum;
    }
    const std::size_t bytes = ggml_block_bytes(t);
    Unpacked u;
    for (int b = 0; b < n / kSuperBlock; ++b, w += bytes) {
        unpack_scalar(t, w, u);
        const std::int8_t* q = a.q + kSuperBlock * b;
        int s1 = 0, s2 = 0;
        for (int g = 0; g < 16; ++g) {
            int s = 0;
            for (int i = 0; i < 16; ++i) s += u.q[16 * g + i] * q[16 * g + i];
            s1 += u.sc[g] * s;
            s2 += u.k[g] * a.bsums[16 * b + g];
        }
        if (t == GgmlType::Q6_K || t == GgmlType::Q3_K)  // one scale: the offset subtracted exactly
            sum += (u.dmul * a.d[b]) * float(s1 - s2);
        else
            sum += (u.dmul * a.d[b]) * float(s1) - (u.mmul * a.d[b]) * float(s2);
    }
    return sum;
}

#else  // the SIMD paths

// acc + the sums of 4 u8 x s8 products per int32 lane.
inline __m256i dot_u8s8(__m256i acc, __m256i u, __m256i s) {
#if KVS_DOT_LEVEL == 1
    return _mm256_add_epi32(acc,
                            _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#elif KVS_DOT_LEVEL == 2
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
    return _mm256_dpbusd_epi32(acc, u, s);
#endif
}

#if KVS_DOT_LEVEL < 3  // the 256-bit paths' K-quant sum (avx512vnni has its own)
// acc + per int32 lane: (u0 s0 + u1 s1) sc0 + (u2 s2 + u3 s3) sc1, sc the int16 scales.
inline __m256i dot_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
    const __m256i pairs = _mm256_maddubs_epi16(u, s);  // |pair| <= 2 * 63 * 127: no saturation
#if KVS_DOT_LEVEL == 1
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, sc));
#else
    return _mm256_dpwssd_avx_epi32(acc, pairs, sc);
#endif
}
#endif

inline float hsum(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

inline __m256i load256(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
inline __m128i load128(const void* p) {
    return _mm_loadu_si128(static_cast<const __m128i*>(p));
}
inline std::uint32_t load32(const unsigned char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// The weights are one stream, row after row; the hardware prefetcher alone leaves a single
// thread short of the read bandwidth while the arithmetic holds the loads back, so each block
// asks for the lines kPrefetchBytes ahead of it (past a matrix's end the hint is dropped).
// Measured on a Zen 5 core (docs/bench/quant_matmul_step.cpp, Q4_K step, min of 300): 512
// bytes ahead 2.25 ms, 2 KiB 1.74-1.80, 4 KiB 1.71-1.75, 8 KiB 1.68-1.70, 16 KiB 1.78.
constexpr std::size_t kPrefetchBytes = 8192;
inline void prefetch_ahead(const unsigned char* w, std::size_t bytes) {
    for (std::size_t o = 0; o < bytes; o += 64)
        _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchBytes + o), _MM_HINT_T0);
}

// A Q8_0 or Q4_0 block's 32 weights as int8.
template <GgmlType kT>
inline __m256i block_weights(const unsigned char* blk) {
    if constexpr (kT == GgmlType::Q8_0) {
        return load256(blk + 2);
    } else {  // low nibbles are values 0..15, high nibbles 16..31, stored as q + 8
        const __m128i v = load128(blk + 2), m = _mm_set1_epi8(0xF);
        const __m256i q =
            _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), m), _mm_and_si128(v, m));
        return _mm256_sub_epi8(q, _mm256_set1_epi8(8));
    }
}

template <GgmlType kT>
float dot_blocks32(const unsigned char* w, const ActRow& a, int n) {
    constexpr std::size_t kBytes = kT == GgmlType::Q8_0 ? 34 : 18;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    const int nb = n / 32;
    int b = 0;
    auto one = [&](int i, __m256& acc) {
        const unsigned char* blk = w + i * kBytes;
        const __m256i x = block_weights<kT>(blk), y = load256(a.q + 32 * i);
        // |w| x (a with w's sign): u8 x s8, the products of w and a
        const __m256i p =
            dot_u8s8(_mm256_setzero_si256(), _mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p),
                              _mm256_set1_ps(half_bits_to_float(blk) * a.d[i]), acc);
    };
    for (; b + 2 <= nb; b += 2) {
        prefetch_ahead(w + b * kBytes, 2 * kBytes);
        one(b, acc0);
        one(b + 1, acc1);
    }
    if (b < nb) one(b, acc0);
    return hsum(_mm256_add_ps(acc0, acc1));
}

// A super-block unpacked: 8 x 32 codes in value order, 16 int16 group scales and offsets.
struct Super {
    __m256i q[8];
    __m256i sc, k;
    float dmul, mmul;
};

// Q4_K's and Q5_K's 8 six-bit scales and mins, each doubled to its two groups of 16 (ggml's
// utmp arrangement: bytes 0..7 the scales, 8..15 the mins).
inline void scales_mins_k4(const unsigned char* s, __m256i& sc, __m256i& k) {
    std::uint32_t u[4] = {load32(s), load32(s + 4), load32(s + 8), 0};
    constexpr std::uint32_t m1 = 0x3f3f3f3f, m2 = 0x0f0f0f0f, m3 = 0x03030303;
    u[3] = ((u[2] >> 4) & m2) | (((u[1] >> 6) & m3) << 4);
    const std::uint32_t mins_lo = u[1] & m1;
    u[1] = (u[2] & m2) | (((u[0] >> 6) & m3) << 4);
    u[2] = mins_lo;
    u[0] &= m1;
    const __m128i scales = _mm_set_epi32(0, 0, int(u[1]), int(u[0]));
    const __m128i mins = _mm_set_epi32(0, 0, int(u[3]), int(u[2]));
    sc = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(scales, scales));
    k = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins, mins));
}

template <GgmlType kT>
inline void unpack(const unsigned char* p, Super& s) {
    const __m256i kLow4 = _mm256_set1_epi8(0xF);
    if constexpr (kT == GgmlType::Q4_K || kT == GgmlType::Q5_K) {
        // d, dmin, scales[12], (Q5_K: qh[32]), qs[128]
        constexpr bool q5 = kT == GgmlType::Q5_K;
        const unsigned char* qs = p + (q5 ? 48 : 16);
        const __m256i qh = q5 ? load256(p + 16) : _mm256_setzero_si256();
        for (int j = 0; j < 4; ++j) {
            const __m256i v = load256(qs + 32 * j);
            __m256i lo = _mm256_and_si256(v, kLow4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), kLow4);
            if constexpr (q5) {
                const __m256i h = _mm256_srli_epi16(qh, 2 * j);
                lo = _mm256_or_si256(
                    lo, _mm256_slli_epi16(_mm256_and_si256(h, _mm256_set1_epi8(1)), 4));
                hi = _mm256_or_si256(
                    hi, _mm256_slli_epi16(_mm256_and_si256(h, _mm256_set1_epi8(2)), 3));
            }
            s.q[2 * j] = lo;
            s.q[2 * j + 1] = hi;
        }
        scales_mins_k4(p + 4, s.sc, s.k);
        s.dmul = half_bits_to_float(p);
        s.mmul = half_bits_to_float(p + 2);
    } else if constexpr (kT == GgmlType::Q6_K) {
        // ql[128], qh[64], scales[16], d
        const __m256i m30 = _mm256_set1_epi8(0x30);
        for (int n = 0; n < 2; ++n) {
            const __m256i l0 = load256(p + 64 * n), l1 = load256(p + 64 * n + 32);
            const __m256i h = load256(p + 128 + 32 * n);
            s.q[4 * n] = _mm256_or_si256(_mm256_and_si256(l0, kLow4),
                                         _mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
            s.q[4 * n + 1] = _mm256_or_si256(_mm256_and_si256(l1, kLow4),
                                             _mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
            s.q[4 * n + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), kLow4),
                                             _mm256_and_si256(h, m30));
            s.q[4 * n + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), kLow4),
                                             _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
        }
        s.sc = _mm256_cvtepi8_epi16(load128(p + 192));
        s.k = _mm256_slli_epi16(s.sc, 5);  // 32 sc
        s.dmul = s.mmul = half_bits_to_float(p + 208);
    } else if constexpr (kT == GgmlType::Q3_K) {
        // hmask[32], qs[64], scales[12], d
        const __m256i hm = load256(p), three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
        for (int n = 0; n < 2; ++n) {
            const __m256i v = load256(p + 32 + 32 * n);
            for (int c = 0; c < 4; ++c) {
                const __m256i lo = _mm256_and_si256(_mm256_srli_epi16(v, 2 * c), three);
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * n + c), one);
                s.q[4 * n + c] = _mm256_or_si256(lo, _mm256_slli_epi16(hb, 2));
            }
        }
        // ggml's aux arrangement of the 16 six-bit scales
        const std::uint32_t a0 = load32(p + 96), a1 = load32(p + 100), t = load32(p + 104);
        constexpr std::uint32_t m1 = 0x03030303, m2 = 0x0f0f0f0f;
        const std::uint32_t s0 = (a0 & m2) | (((t >> 0) & m1) << 4);
        const std::uint32_t s1 = (a1 & m2) | (((t >> 2) & m1) << 4);
        const std::uint32_t s2 = ((a0 >> 4) & m2) | (((t >> 4) & m1) << 4);
        const std::uint32_t s3 = ((a1 >> 4) & m2) | (((t >> 6) & m1) << 4);
        const __m128i raw = _mm_set_epi32(int(s3), int(s2), int(s1), int(s0));
        s.sc = _mm256_cvtepi8_epi16(_mm_sub_epi8(raw, _mm_set1_epi8(32)));
        s.k = _mm256_slli_epi16(s.sc, 2);  // 4 sc
        s.dmul = s.mmul = half_bits_to_float(p + 108);
    } else {  // Q2_K: scales[16], qs[64], d, dmin
        const __m256i three = _mm256_set1_epi8(3);
        for (int n = 0; n < 2; ++n) {
            const __m256i v = load256(p + 16 + 32 * n);
            for (int c = 0; c < 4; ++c)
                s.q[4 * n + c] = _mm256_and_si256(_mm256_srli_epi16(v, 2 * c), three);
        }
        const __m128i raw = load128(p), m = _mm_set1_epi8(0xF);
        s.sc = _mm256_cvtepu8_epi16(_mm_and_si128(raw, m));
        s.k = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), m));
        s.dmul = half_bits_to_float(p + 80);
        s.mmul = half_bits_to_float(p + 82);
    }
}

// C tokens against one weight row: each super-block unpacked once, then each token's sums. A
// token's arithmetic is the same whatever C (its own accumulators, the same order), so a batch
// and a row alone agree bit for bit.
template <GgmlType kT, int C>
void dot_super(const unsigned char* w, const ActRow* a, int n, float* out) {
    constexpr std::size_t kBytes = kT == GgmlType::Q2_K ? sizeof(BlockQ2K)
                                   : kT == GgmlType::Q3_K ? sizeof(BlockQ3K)
                                   : kT == GgmlType::Q4_K ? sizeof(BlockQ4K)
                                   : kT == GgmlType::Q5_K ? sizeof(BlockQ5K)
                                                          : sizeof(BlockQ6K);
    // Q6_K's and Q3_K's offsets are scaled by d, as their products are: subtracted as integers
    // before the one conversion to float (as ggml does; converting both first would lose the
    // low bits of two large, nearly equal sums). Q2_K's, Q4_K's and Q5_K's mins have their own
    // scale, dmin, and a float sum of their own.
    constexpr bool kSameScale = kT == GgmlType::Q6_K || kT == GgmlType::Q3_K;
#if KVS_DOT_LEVEL == 3
    __m512 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
#else
    __m256 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
#endif
    __m256 acc_m[C];
    for (int c = 0; c < C; ++c) acc_m[c] = _mm256_setzero_ps();
    Super s;
    for (int b = 0; b < n / kSuperBlock; ++b, w += kBytes) {
        prefetch_ahead(w, kBytes);
        unpack<kT>(w, s);
#if KVS_DOT_LEVEL == 3
        // 64 codes (4 groups) a vector; the group scales spread by one permute each
        // (GCC 12's plain casts, inserts and conversions start from an undefined vector, which
        // -Wmaybe-uninitialized flags; the zeroing and zero-masked forms are the same
        // instructions.)
        const __m512i zero = _mm512_setzero_si512();
        const __m512i sc = _mm512_maskz_inserti64x4(0xff, zero, s.sc, 0);
        __m512i u[4], scale[4];
        for (int k = 0; k < 4; ++k) {
            const __m512i idx = _mm512_srli_epi16(
                _mm512_add_epi16(_mm512_set_epi32(0x001f001e, 0x001d001c, 0x001b001a, 0x00190018,
                                                  0x00170016, 0x00150014, 0x00130012, 0x00110010,
                                                  0x000f000e, 0x000d000c, 0x000b000a, 0x00090008,
                                                  0x00070006, 0x00050004, 0x00030002, 0x00010000),
                                 _mm512_set1_epi16(short(32 * k))),
                3);  // lane l of chunk pair k: group (32 k + l) / 8
            u[k] = _mm512_maskz_inserti64x4(
                0xff, _mm512_maskz_inserti64x4(0xff, zero, s.q[2 * k], 0), s.q[2 * k + 1], 1);
            scale[k] = _mm512_permutexvar_epi16(idx, sc);
        }
        for (int c = 0; c < C; ++c) {
            const std::int8_t* q = a[c].q + kSuperBlock * b;
            __m512i sum = _mm512_setzero_si512();
            for (int k = 0; k < 4; ++k)
                sum = _mm512_dpwssd_epi32(
                    sum, _mm512_maddubs_epi16(u[k], _mm512_loadu_si512(q + 64 * k)), scale[k]);
            const __m256i offs = _mm256_madd_epi16(load256(a[c].bsums + 16 * b), s.k);
            if constexpr (kSameScale)
                sum = _mm512_sub_epi32(sum, _mm512_maskz_inserti64x4(0xff, zero, offs, 0));
            else
                acc_m[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(offs),
                                           _mm256_set1_ps(s.mmul * a[c].d[b]), acc_m[c]);
            acc[c] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, sum),
                                     _mm512_set1_ps(s.dmul * a[c].d[b]), acc[c]);
        }
#else
        // 32 codes (2 groups) a vector: lane 0 takes group 2k's scale, lane 1 group 2k+1's
        const __m256i lo = _mm256_permute2x128_si256(s.sc, s.sc, 0x00);
        const __m256i hi = _mm256_permute2x128_si256(s.sc, s.sc, 0x11);
        __m256i scale[8];
        for (int k = 0; k < 8; ++k) {
            const int g = 2 * (k % 4);  // int16 g of the half in lane 0, g + 1 in lane 1
            const __m256i pick = _mm256_set_epi8(
                char(2 * g + 3), char(2 * g + 2), char(2 * g + 3), char(2 * g + 2), char(2 * g + 3),
                char(2 * g + 2), char(2 * g + 3), char(2 * g + 2), char(2 * g + 3), char(2 * g + 2),
                char(2 * g + 3), char(2 * g + 2), char(2 * g + 3), char(2 * g + 2), char(2 * g + 3),
                char(2 * g + 2), char(2 * g + 1), char(2 * g), char(2 * g + 1), char(2 * g),
                char(2 * g + 1), char(2 * g), char(2 * g + 1), char(2 * g), char(2 * g + 1),
                char(2 * g), char(2 * g + 1), char(2 * g), char(2 * g + 1), char(2 * g),
                char(2 * g + 1), char(2 * g));
            scale[k] = _mm256_shuffle_epi8(k < 4 ? lo : hi, pick);
        }
        for (int c = 0; c < C; ++c) {
            const std::int8_t* q = a[c].q + kSuperBlock * b;
            __m256i sum = _mm256_setzero_si256();
            for (int k = 0; k < 8; ++k)
                sum = dot_scaled(sum, s.q[k], load256(q + 32 * k), scale[k]);
            const __m256i offs = _mm256_madd_epi16(load256(a[c].bsums + 16 * b), s.k);
            if constexpr (kSameScale)
                sum = _mm256_sub_epi32(sum, offs);
            else
                acc_m[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(offs),
                                           _mm256_set1_ps(s.mmul * a[c].d[b]), acc_m[c]);
            acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(s.dmul * a[c].d[b]),
                                     acc[c]);
        }
#endif
    }
    for (int c = 0; c < C; ++c) {
#if KVS_DOT_LEVEL == 3
        const __m512d halves = _mm512_castps_pd(acc[c]);
        const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, halves, 0));
        const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, halves, 1));
        out[c] = hsum(_mm256_add_ps(lo, hi)) - hsum(acc_m[c]);
#else
        out[c] = hsum(acc[c]) - hsum(acc_m[c]);
#endif
    }
}

#if KVS_DOT_LEVEL == 3
// Q4_K and Q5_K in 512-bit vectors, straight from the bytes: a 64-byte load of the nibbles,
// one AND and one shift-AND give 128 codes in the order Acts::qn holds the activations, so no
// code moves between vectors; each vector holds two 32-value groups, whose int16 scales one
// vpermw spreads. Per token and super-block the sum stays in int32 (codes * activations *
// scales: at most 8 * 32 * 31 * 127 * 63 < 2^31) and is converted once; the mins are one
// product of the 8 mins with the activations' 8 sums of 32.
template <GgmlType kT, int C>
void dot_q45k(const unsigned char* w, const ActRow* a, int n, float* out) {
    constexpr bool q5 = kT == GgmlType::Q5_K;
    constexpr std::size_t kBytes = q5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K);
    const __m512i low4 = _mm512_set1_epi8(0xF);
    // vector v (0..3) holds groups (0, 2), (1, 3), (4, 6), (5, 7): int16 lanes 0..15 the first
    const __m512i pick[4] = {
        _mm512_maskz_inserti64x4(0xff, _mm512_set1_epi16(0), _mm256_set1_epi16(2), 1),
        _mm512_maskz_inserti64x4(0xff, _mm512_set1_epi16(1), _mm256_set1_epi16(3), 1),
        _mm512_maskz_inserti64x4(0xff, _mm512_set1_epi16(4), _mm256_set1_epi16(6), 1),
        _mm512_maskz_inserti64x4(0xff, _mm512_set1_epi16(5), _mm256_set1_epi16(7), 1)};
    __m512 acc[C];
    __m128 acc_m[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps(), acc_m[c] = _mm_setzero_ps();
    for (int b = 0; b < n / kSuperBlock; ++b, w += kBytes) {
        prefetch_ahead(w, kBytes);
        const unsigned char* qs = w + (q5 ? 48 : 16);
        __m512i u[4];
        for (int m = 0; m < 2; ++m) {
            const __m512i v = _mm512_loadu_si512(qs + 64 * m);
            u[2 * m] = _mm512_and_si512(v, low4);
            u[2 * m + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
        }
        if constexpr (q5) {  // qh byte l: bit 2c (2c + 1) the fifth bit of chunk c's low (high)
            const __m512i qh = _mm512_maskz_broadcast_i64x4(0xff, load256(w + 16));
            const __m512i one = _mm512_set1_epi8(1);
            for (int m = 0; m < 2; ++m) {
                // bytes 0..31 of u[2m] are chunk 2m's low nibbles, 32..63 chunk 2m+1's
                const __m512i sh = _mm512_maskz_inserti64x4(0xff, _mm512_set1_epi16(short(4 * m)),
                                                            _mm256_set1_epi16(short(4 * m + 2)), 1);
                const __m512i h = _mm512_srlv_epi16(qh, sh);
                u[2 * m] =
                    _mm512_or_si512(u[2 * m], _mm512_slli_epi16(_mm512_and_si512(h, one), 4));
                u[2 * m + 1] = _mm512_or_si512(
                    u[2 * m + 1],
                    _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, 1), one), 4));
            }
        }
        // ggml's utmp: 8 six-bit scales, then 8 mins, from the 12 bytes
        const unsigned char* sp = w + 4;
        const std::uint32_t u0 = load32(sp), u1 = load32(sp + 4), u2 = load32(sp + 8);
        constexpr std::uint32_t m1 = 0x3f3f3f3f, m2 = 0x0f0f0f0f, m3 = 0x03030303;
        const std::uint32_t sc_lo = u0 & m1, sc_hi = (u2 & m2) | (((u0 >> 6) & m3) << 4);
        const std::uint32_t mn_lo = u1 & m1, mn_hi = ((u2 >> 4) & m2) | (((u1 >> 6) & m3) << 4);
        const __m128i sc8 =
            _mm_cvtsi64_si128(static_cast<long long>(sc_lo | std::uint64_t(sc_hi) << 32));
        const __m128i mn8 =
            _mm_cvtsi64_si128(static_cast<long long>(mn_lo | std::uint64_t(mn_hi) << 32));
        const __m512i sc16 = _mm512_maskz_broadcast_i32x4(0xffff, _mm_cvtepu8_epi16(sc8));
        const __m128i mn16 = _mm_cvtepu8_epi16(mn8);
        __m512i scale[4];
        for (int v = 0; v < 4; ++v) scale[v] = _mm512_permutexvar_epi16(pick[v], sc16);
        const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(int(load32(w))));  // d, dmin
        for (int c = 0; c < C; ++c) {
            const std::int8_t* q = a[c].qn + kSuperBlock * b;
            __m512i sum = _mm512_setzero_si512();
            for (int v = 0; v < 4; ++v)
                sum = _mm512_dpwssd_epi32(
                    sum, _mm512_maddubs_epi16(u[v], _mm512_loadu_si512(q + 64 * v)), scale[v]);
            const __m128i offs = _mm_madd_epi16(load128(a[c].bsums32 + 8 * b), mn16);
            const __m128 f = _mm_mul_ps(dd, _mm_set1_ps(a[c].d[b]));  // d * da, dmin * da
            acc_m[c] = _mm_fmadd_ps(_mm_cvtepi32_ps(offs), _mm_permute_ps(f, 0x55), acc_m[c]);
            acc[c] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, sum),
                                     _mm512_maskz_broadcastss_ps(0xffff, f), acc[c]);
        }
    }
    for (int c = 0; c < C; ++c) {
        const __m512d halves = _mm512_castps_pd(acc[c]);
        const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, halves, 0));
        const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, halves, 1));
        __m128 m = _mm_add_ps(acc_m[c], _mm_movehl_ps(acc_m[c], acc_m[c]));
        m = _mm_add_ss(m, _mm_movehdup_ps(m));
        out[c] = hsum(_mm256_add_ps(lo, hi)) - _mm_cvtss_f32(m);
    }
}
#endif

// The tokens' dots with one row, out[t] for t < T: K-quants four tokens at a time.
template <GgmlType kT>
void dots(const unsigned char* w, const ActRow* a, int T, int n, float* out) {
    if constexpr (kT == GgmlType::Q8_0 || kT == GgmlType::Q4_0) {
        for (int t = 0; t < T; ++t) out[t] = dot_blocks32<kT>(w, a[t], n);
    } else {
        int t = 0;
#if KVS_DOT_LEVEL == 3
        if constexpr (kT == GgmlType::Q4_K || kT == GgmlType::Q5_K) {
            for (; t + 4 <= T; t += 4) dot_q45k<kT, 4>(w, a + t, n, out + t);
            for (; t < T; ++t) dot_q45k<kT, 1>(w, a + t, n, out + t);
            return;
        }
#endif
        for (; t + 4 <= T; t += 4) dot_super<kT, 4>(w, a + t, n, out + t);
        for (; t < T; ++t) dot_super<kT, 1>(w, a + t, n, out + t);
    }
}

#endif

// Rows [i0, i1) of out for every token: one weight row after another (one prefetch stream, as
// the float path's decode), each against the T tokens while it is in L1.
template <GgmlType kT>
void rows(float* out, const Acts& a, const unsigned char* w, int T, int n, int d, int i0, int i1) {
    const std::size_t row_bytes = ggml_row_bytes(kT, n);
    const int block = super_blocks(kT) ? kSuperBlock : 32;
    std::vector<ActRow> acts(T);
    for (int t = 0; t < T; ++t)
        acts[t] = {a.q.data() + std::size_t(t) * n, a.d.data() + std::size_t(t) * (n / block),
                   a.bsums.empty() ? nullptr : a.bsums.data() + std::size_t(t) * (n / 16),
                   a.qn.empty() ? nullptr : a.qn.data() + std::size_t(t) * n,
                   a.bsums32.empty() ? nullptr : a.bsums32.data() + std::size_t(t) * (n / 32)};
    std::vector<float> o(T);
    for (int i = i0; i < i1; ++i) {
        const unsigned char* r = w + std::size_t(i) * row_bytes;
#if KVS_DOT_LEVEL == 0
        for (int t = 0; t < T; ++t) o[t] = dot_row(kT, r, acts[t], n);
#else
        dots<kT>(r, acts.data(), T, n, o.data());
#endif
        for (int t = 0; t < T; ++t) out[std::size_t(t) * d + i] = o[t];
    }
}

template <GgmlType kT>
void matmul_type(float* out, const Acts& a, const unsigned char* w, int T, int n, int d,
                 ThreadPool* pool) {
    if (!pool || pool->threads() == 1 || double(T) * n * d < kMinParallelMacs)
        return rows<kT>(out, a, w, T, n, d, 0, d);
    const int items = std::min(d, kItemsPerThread * pool->threads());
    pool->run(items, [&](int item, int) {
        rows<kT>(out, a, w, T, n, d, int(std::int64_t(d) * item / items),
                 int(std::int64_t(d) * (item + 1) / items));
    });
}

}  // namespace

void matmul_q(float* out, const float* x, GgmlType type, const unsigned char* w, int T, int n,
              int d, ThreadPool* pool) {
    // The calling thread's scratch: each token's row quantised once for all d weight rows.
    static thread_local Acts acts;
    quantize_rows(x, type, T, n, acts);
    switch (type) {
        case GgmlType::Q8_0:
            return matmul_type<GgmlType::Q8_0>(out, acts, w, T, n, d, pool);
        case GgmlType::Q4_0:
            return matmul_type<GgmlType::Q4_0>(out, acts, w, T, n, d, pool);
        case GgmlType::Q2_K:
            return matmul_type<GgmlType::Q2_K>(out, acts, w, T, n, d, pool);
        case GgmlType::Q3_K:
            return matmul_type<GgmlType::Q3_K>(out, acts, w, T, n, d, pool);
        case GgmlType::Q4_K:
            return matmul_type<GgmlType::Q4_K>(out, acts, w, T, n, d, pool);
        case GgmlType::Q5_K:
            return matmul_type<GgmlType::Q5_K>(out, acts, w, T, n, d, pool);
        case GgmlType::Q6_K:
            return matmul_type<GgmlType::Q6_K>(out, acts, w, T, n, d, pool);
        default:
            return;
    }
}

QuantizedRow quantize_row(GgmlType weights, const float* x, int n) {
    Acts a;
    quantize_rows(x, weights, 1, n, a);
    QuantizedRow r;
    r.q.assign(a.q.begin(), a.q.end());
    r.d = a.d;
    r.bsums.assign(a.bsums.begin(), a.bsums.end());
    return r;
}

}  // namespace kvs::cpu::KVS_DOT_NS
