#include "kernels/cpu/isa.h"

#include <cstdlib>
#if defined(KVSCOPE_X86_PATHS)
#include <cpuid.h>
#endif

#include "core/util/error.h"

namespace kvs::cpu {
namespace {

#if defined(KVSCOPE_X86_PATHS)  // kernels/CMakeLists.txt: the x86 paths were built
constexpr bool kX86 = true;
// F16C (compact F16 weights) from CPUID leaf 1, ECX bit 29: clang 14's __builtin_cpu_supports
// knows no "f16c" (the fuzz build failed on it), and GCC's agrees with this.
bool cpu_has_f16c() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
#else
constexpr bool kX86 = false;
#endif

bool cpu_has(Isa isa) {
#if defined(KVSCOPE_X86_PATHS)  // kernels/CMakeLists.txt: the x86 paths were built
    __builtin_cpu_init();
    switch (isa) {
        case Isa::sse:
            return true;  // part of x86-64
        case Isa::avx2:
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                   cpu_has_f16c();
        case Isa::avx512:
            // the avx512 path is compiled with -mavx512f (and FMA, F16C, AVX2 below it)
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
                   __builtin_cpu_supports("fma") && cpu_has_f16c();
        case Isa::plain:
        case Isa::simd128:
            return false;
    }
    return false;
#elif defined(KVSCOPE_WASM_SIMD128)  // the web page built with -msimd128 (kernels/CMakeLists)
    return isa == Isa::simd128;
#else
    return isa == Isa::plain;
#endif
}

}  // namespace

const char* isa_name(Isa isa) {
    switch (isa) {
        case Isa::plain:
            return "plain";
        case Isa::sse:
            return "sse";
        case Isa::avx2:
            return "avx2";
        case Isa::avx512:
            return "avx512";
        case Isa::simd128:
            return "simd128";
    }
    return "?";
}

std::vector<Isa> available_isas() {
    std::vector<Isa> out;
    for (Isa isa : {Isa::plain, Isa::sse, Isa::avx2, Isa::avx512, Isa::simd128})
        if (cpu_has(isa)) out.push_back(isa);
    return out;
}

Isa choose_isa(const char* requested, const std::vector<Isa>& have) {
    if (have.empty()) throw Error("this build has no SIMD path for this CPU");
    if (!requested || !*requested) return have.back();
    const std::string want = requested;
    std::string runs;
    for (Isa isa : have) {
        if (want == isa_name(isa)) return isa;
        runs += std::string(runs.empty() ? "" : ", ") + isa_name(isa);
    }
    const bool x86_name = want == "sse" || want == "avx2" || want == "avx512";
    // An x86-64 build made with -DKVSCOPE_ONE_SIMD_PATH=ON (the fuzz build) has only `plain`.
    const char* why = !x86_name ? "unknown SIMD path"
                      : kX86    ? "this CPU lacks it"
                                : "an x86-64 path, which this build does not have";
    throw Error("KVSCOPE_ISA=" + want + ": " + why + " (this CPU runs: " + runs + ")");
}

Isa active_isa() {
    static const Isa isa = choose_isa(std::getenv("KVSCOPE_ISA"), available_isas());
    return isa;
}

}  // namespace kvs::cpu
