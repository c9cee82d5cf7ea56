#pragma once
// Which SIMD path the fast CPU ops run: the widest this CPU has, chosen once at start, or a lower
// one named by the environment variable KVSCOPE_ISA (for tests and measurements). One binary
// holds every path (kernels/CMakeLists.txt compiles the same kernel sources once per path), so a
// build from one machine runs on any x86-64 and still uses AVX-512 where the core has it.
#include <string>
#include <vector>

namespace kvs::cpu {

// Lowest to widest. sse: baseline x86-64 (SSE2, 8-float vectors as two registers, no FMA);
// avx2: AVX2 + FMA (+ F16C for F16 weights), 8 floats; avx512: AVX-512F, 16 floats. simd128: the
// web page built with WebAssembly SIMD128 (-msimd128: 8-float vectors as two v128 registers, no
// FMA); a browser loads the whole module with SIMD or not at all, so the page has this path alone,
// chosen when it is built (KVSCOPE_WEB_SIMD), not at run time. Elsewhere only `plain` exists: the
// portable build of the same sources (NEON, or scalar wasm, whatever the compiler targets).
enum class Isa { plain, sse, avx2, avx512, simd128 };

const char* isa_name(Isa isa);
// The paths this binary has and this CPU can run, lowest first.
std::vector<Isa> available_isas();
// The path the ops use: KVSCOPE_ISA if set (an unknown name or a path this CPU lacks throws
// kvs::Error with one line), else the widest available. Decided on the first call.
Isa active_isa();
// What active_isa() chooses for this value of KVSCOPE_ISA (null or empty: unset) on a CPU that
// runs `have` (available_isas(), lowest first); throws the same.
Isa choose_isa(const char* requested, const std::vector<Isa>& have);

}  // namespace kvs::cpu
