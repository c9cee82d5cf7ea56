#pragma once
// Integer dot products for quantised weights (Q8_0, Q4_0 and the K-quants Q2_K..Q6_K), as
// llama.cpp computes them: each token's activations are quantised per block to int8 (Q8_0's
// 32-value blocks for Q8_0 and Q4_0 weights, Q8_K's 256-value super-blocks for the K-quants;
// ggml's rounding, so the same int8 values), then each block's products are summed as integers
// and scaled once by the two blocks' scales. The weights are read where they lie, in their own
// bytes: decode moves Q4_K's 4.5 bits a weight from memory instead of float32's 32.
//
// One source (quant_matmul.cpp), built once per path (kernels/CMakeLists.txt), chosen at run time
// like the float paths (isa.h):
//  - scalar:     plain C++ loops (the web page, the sse and plain float paths, any CPU);
//  - avx2:       vpmaddubsw (u8 x s8 pairs to int16) then vpmaddwd (pairs to int32), 256-bit;
//  - avxvnni:    AVX-VNNI's vpdpbusd / vpdpwssd, which do both steps in one, 256-bit;
//  - avx512vnni: AVX-512 VNNI's, with the K-quants' super-blocks in 512-bit vectors.
// `float` turns them off: the weights are then widened to float32 as they are read
// (fast_matmul.cpp), every element the float32 matmul of the dequantised matrix, bit for bit:
// the path kept for checking. The integer paths differ from it by the activations' rounding to
// 8 bits, and from each other only in the order their float scales are summed.
#include <cstdint>
#include <string>
#include <vector>

namespace kvs {
enum class GgmlType : std::uint32_t;  // core/files/gguf_file.h
}

namespace kvs::cpu {

class ThreadPool;

enum class DotPath { float32, scalar, avx2, avxvnni, avx512vnni };

const char* dot_path_name(DotPath p);  // "float", "scalar", "avx2", "avxvnni", "avx512vnni"
// The paths this binary has and this CPU runs under the active float path (isa.h: under avx2 no
// AVX-512, under sse or plain only scalar), lowest first; float is always there.
std::vector<DotPath> available_dot_paths();
// KVSCOPE_DOT if set (an unknown name or one this CPU lacks throws kvs::Error with one line), else
// the widest available. Decided on the first call.
DotPath active_dot_path();
// What active_dot_path() chooses for this value of KVSCOPE_DOT on a CPU that runs `have`.
DotPath choose_dot_path(const char* requested, const std::vector<DotPath>& have);
// One line for reports: "avx512vnni (int8 dot products, activations quantised per block; this CPU
// runs float, scalar, avx2, avxvnni, avx512vnni; KVSCOPE_DOT picks another)".
std::string dot_path_summary();

// Whether the integer paths multiply weights of `type` (Q8_0, Q4_0, Q2_K..Q6_K).
bool integer_dot_reads(GgmlType type);

// One path's matmul: out[t, i] = dot(w[i, :], x[t, :]) with x's rows quantised as above.
// x: [T, n] float32, w: [d, n] in `type` (n whole blocks of it), out: [T, d]. Each element is the
// same whatever T, the rows' split or the thread count.
using QuantMatmul = void (*)(float* out, const float* x, GgmlType type, const unsigned char* w,
                             int T, int n, int d, ThreadPool* pool);
// The matmul of a path this binary has and this CPU runs (not float), else null.
QuantMatmul quant_matmul_for(DotPath p);

// The activations of one row of n floats as the integer paths quantise them, for tests: Q8_0
// blocks (q, and d as the half it is stored in, widened) or Q8_K super-blocks (q, float d,
// bsums).
struct QuantizedRow {
    std::vector<signed char> q;
    std::vector<float> d;
    std::vector<short> bsums;  // Q8_K only: sums of 16 q at a time
};
QuantizedRow quantize_row_for(DotPath p, GgmlType weights, const float* x, int n);

}  // namespace kvs::cpu
