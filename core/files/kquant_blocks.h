#pragma once
// ggml's K-quants: super-blocks of 256 values with their own scales (and, for the affine types,
// mins), laid out byte for byte as ggml-common.h declares them. Most GGUF files people download
// are Q4_K_M (Q4_K and Q6_K tensors) or Q5_K_M (Q5_K and Q6_K). A value x is
//   Q2_K: 16 groups of 16, 2-bit q:   x = d * sc_g * q - dmin * m_g   (sc, m: 4 bits each)
//   Q3_K: 16 groups of 16, 3-bit q:   x = d * (sc_g - 32) * (q - 4)   (sc: 6 bits, high bit of q
//                                                                     in hmask)
//   Q4_K:  8 groups of 32, 4-bit q:   x = d * sc_g * q - dmin * m_g   (sc, m: 6 bits, packed in 12
//                                                                     bytes: kquant_scale_min)
//   Q5_K:  8 groups of 32, 5-bit q:   as Q4_K, the fifth bit in qh
//   Q6_K: 16 groups of 16, 6-bit q:   x = d * sc_g * (q - 32)         (sc: int8)
//   Q8_K: 256 int8 with a float d:    x = d * q  (what llama.cpp quantises activations to for the
//                                     K-quant dot products; bsums: sums of 16 q at a time)
// d and dmin are IEEE halves (Q8_K's d a float). The one decoder of each (dequantize_kquant) is
// ggml's dequantize_row_* operation for operation, so the floats are the same bits (the peer test
// checks them against llama.cpp's own); the one quantiser (encode_kquant) is a plain one: each
// group's scale (and min) from its range, where llama.cpp searches for better ones.
#include <cstddef>
#include <cstdint>

namespace kvs {

enum class GgmlType : std::uint32_t;  // core/files/gguf_file.h

constexpr int kSuperBlock = 256;  // values per K-quant block (ggml's QK_K)

struct BlockQ2K {
    std::uint8_t scales[16];  // low nibble: group scale, high: group min
    std::uint8_t qs[64];      // 2-bit q: byte l of a 128-value half holds l, l+32, l+64, l+96
    std::uint16_t d, dmin;
};
struct BlockQ3K {
    std::uint8_t hmask[32];   // bit k of byte l: the third bit of value 32 k + l
    std::uint8_t qs[64];      // the low 2 bits, as Q2_K's
    std::uint8_t scales[12];  // 16 x 6 bits
    std::uint16_t d;
};
struct BlockQ4K {
    std::uint16_t d, dmin;
    std::uint8_t scales[12];  // 8 scales and 8 mins of 6 bits (kquant_scale_min)
    std::uint8_t qs[128];     // 64 values per 32 bytes: low nibbles first, then high nibbles
};
struct BlockQ5K {
    std::uint16_t d, dmin;
    std::uint8_t scales[12];
    std::uint8_t qh[32];   // bit 2i (2i+1) of byte l: fifth bit of value 64 i + l (+ 32)
    std::uint8_t qs[128];  // the low 4 bits, as Q4_K's
};
struct BlockQ6K {
    std::uint8_t ql[128];  // low 4 bits: per 128-value half, bytes l, l+32 hold l, l+32 (low
                           // nibbles) and l+64, l+96 (high nibbles)
    std::uint8_t qh[64];   // high 2 bits: per half, byte l holds l, l+32, l+64, l+96
    std::int8_t scales[16];
    std::uint16_t d;
};
struct BlockQ8K {
    float d;
    std::int8_t qs[256];
    std::int16_t bsums[16];  // sum of qs[16 g .. 16 g + 15]
};
static_assert(sizeof(BlockQ2K) == 84 && sizeof(BlockQ3K) == 110 && sizeof(BlockQ4K) == 144 &&
                  sizeof(BlockQ5K) == 176 && sizeof(BlockQ6K) == 210 && sizeof(BlockQ8K) == 292,
              "ggml's K-quant blocks");

// Q4_K's and Q5_K's group g (0..7): its 6-bit scale and min from the 12 packed bytes (ggml's
// get_scale_min_k4).
inline void kquant_scale_min(int g, const std::uint8_t* s, std::uint8_t& sc, std::uint8_t& m) {
    if (g < 4) {
        sc = s[g] & 63;
        m = s[g + 4] & 63;
    } else {
        sc = static_cast<std::uint8_t>((s[g + 4] & 0xF) | ((s[g - 4] >> 6) << 4));
        m = static_cast<std::uint8_t>((s[g + 4] >> 4) | ((s[g] >> 6) << 4));
    }
}

// Q3_K's 16 scales (6 bits, as stored: subtract 32) from its 12 packed bytes.
void q3k_scales(const std::uint8_t* packed, std::int8_t out[16]);

// One super-block of activations as llama.cpp quantises them for the K-quant dot products (ggml's
// quantize_row_q8_K_ref: the value of largest magnitude becomes -127, the rest rounded to
// nearest even by the same float product, d = 1 / that scale; bsums).
void quantize_q8k_block(const float* x, BlockQ8K& b);

// True for Q2_K .. Q6_K and Q8_K.
bool is_kquant(GgmlType t);
// n values (whole super-blocks) of K-quant type t at p as float32 into out.
void dequantize_kquant(GgmlType t, const unsigned char* p, std::size_t n, float* out);
// n float32 values (whole super-blocks) as K-quant type t into out.
void encode_kquant(GgmlType t, const float* x, std::size_t n, unsigned char* out);

}  // namespace kvs
