// quant_dot.h's choice of path: the builds this binary has (kernels/CMakeLists.txt), what this
// CPU runs, and KVSCOPE_DOT.
#include <cstdlib>
#if defined(KVSCOPE_X86_PATHS)
#include <cpuid.h>
#endif

#include "core/files/gguf_file.h"
#include "core/util/error.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/quant_dot.h"

namespace kvs::cpu {

// Each path's build (quant_matmul.cpp).
#define KVS_DECLARE_DOT_PATH(ns)                                                                   \
    namespace ns {                                                                                 \
    void matmul_q(float* out, const float* x, GgmlType type, const unsigned char* w, int T, int n, \
                  int d, ThreadPool* pool);                                                        \
    QuantizedRow quantize_row(GgmlType weights, const float* x, int n);                            \
    }
KVS_DECLARE_DOT_PATH(scalar)
#if defined(KVSCOPE_X86_PATHS)
KVS_DECLARE_DOT_PATH(avx2)
KVS_DECLARE_DOT_PATH(avxvnni)
KVS_DECLARE_DOT_PATH(avx512vnni)
#endif
#undef KVS_DECLARE_DOT_PATH

namespace {

#if defined(KVSCOPE_X86_PATHS)
// From CPUID: AVX-VNNI is leaf 7 sub-leaf 1, EAX bit 4; AVX512-VNNI leaf 7, ECX bit 11 (clang
// 14's __builtin_cpu_supports knows neither name).
bool cpu_has_avxvnni() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) != 0;
}
bool cpu_has_avx512vnni() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 11)) != 0;
}
#endif

bool runs(DotPath p) {
    [[maybe_unused]] const Isa isa = active_isa();
    switch (p) {
        case DotPath::float32:
        case DotPath::scalar:
            return true;
#if defined(KVSCOPE_X86_PATHS)
        case DotPath::avx2:  // the avx2 float path checked AVX2, FMA and F16C
            return isa == Isa::avx2 || isa == Isa::avx512;
        case DotPath::avxvnni:
            return (isa == Isa::avx2 || isa == Isa::avx512) && cpu_has_avxvnni();
        case DotPath::avx512vnni:
            __builtin_cpu_init();
            return isa == Isa::avx512 && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") && cpu_has_avx512vnni();
#endif
        default:
            return false;
    }
}

}  // namespace

const char* dot_path_name(DotPath p) {
    switch (p) {
        case DotPath::float32:
            return "float";
        case DotPath::scalar:
            return "scalar";
        case DotPath::avx2:
            return "avx2";
        case DotPath::avxvnni:
            return "avxvnni";
        case DotPath::avx512vnni:
            return "avx512vnni";
    }
    return "?";
}

std::vector<DotPath> available_dot_paths() {
    std::vector<DotPath> out;
    for (DotPath p :
         {DotPath::float32, DotPath::scalar, DotPath::avx2, DotPath::avxvnni, DotPath::avx512vnni})
        if (runs(p)) out.push_back(p);
    return out;
}

DotPath choose_dot_path(const char* requested, const std::vector<DotPath>& have) {
    if (!requested || !*requested) return have.back();
    const std::string want = requested;
    std::string list;
    for (DotPath p : have) {
        if (want == dot_path_name(p)) return p;
        list += std::string(list.empty() ? "" : ", ") + dot_path_name(p);
    }
    const bool known = want == "avx2" || want == "avxvnni" || want == "avx512vnni";
    throw Error("KVSCOPE_DOT=" + want + ": " +
                (known ? "this CPU (or the float path KVSCOPE_ISA chose) lacks it"
                       : "unknown dot-product path") +
                " (this CPU runs: " + list + ")");
}

DotPath active_dot_path() {
    static const DotPath p = choose_dot_path(std::getenv("KVSCOPE_DOT"), available_dot_paths());
    return p;
}

std::string dot_path_summary() {
    const DotPath p = active_dot_path();
    std::string list;
    for (DotPath h : available_dot_paths())
        list += std::string(list.empty() ? "" : ", ") + dot_path_name(h);
    return std::string(dot_path_name(p)) +
           (p == DotPath::float32 ? " (quantised weights widened to float32"
                                  : " (int8 dot products, activations quantised per block") +
           "; this CPU runs " + list + "; KVSCOPE_DOT picks another)";
}

bool integer_dot_reads(GgmlType type) {
    switch (type) {
        case GgmlType::Q8_0:
        case GgmlType::Q4_0:
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
            return true;
        default:
            return false;
    }
}

QuantMatmul quant_matmul_for(DotPath p) {
    if (p == DotPath::float32 || !runs(p)) return nullptr;
    switch (p) {
#if defined(KVSCOPE_X86_PATHS)
        case DotPath::avx2:
            return &avx2::matmul_q;
        case DotPath::avxvnni:
            return &avxvnni::matmul_q;
        case DotPath::avx512vnni:
            return &avx512vnni::matmul_q;
#endif
        default:
            return &scalar::matmul_q;
    }
}

QuantizedRow quantize_row_for(DotPath p, GgmlType weights, const float* x, int n) {
    switch (runs(p) ? p : DotPath::scalar) {
#if defined(KVSCOPE_X86_PATHS)
        case DotPath::avx2:
            return avx2::quantize_row(weights, x, n);
        case DotPath::avxvnni:
            return avxvnni::quantize_row(weights, x, n);
        case DotPath::avx512vnni:
            return avx512vnni::quantize_row(weights, x, n);
#endif
        default:
            return scalar::quantize_row(weights, x, n);
    }
}

}  // namespace kvs::cpu
