// The fast ops of fast_ops.h: each call goes to the SIMD path chosen once at start (isa.h), whose
// table is one of the per-path builds of the kernel sources (isa_kernels.h).
#include <string>

#include "kernels/cpu/isa_kernels.h"

namespace kvs::cpu {

// The tables this binary has (kernels/CMakeLists.txt builds one per path of its architecture).
#if defined(KVSCOPE_X86_PATHS)
namespace sse {
extern const Kernels table;
}
namespace avx2 {
extern const Kernels table;
}
namespace avx512 {
extern const Kernels table;
}
#elif defined(KVSCOPE_WASM_SIMD128)
namespace simd128 {
extern const Kernels table;
}
#else
namespace plain {
extern const Kernels table;
}
#endif

const Kernels* kernels_for(Isa isa) {
    bool runs = false;
    for (Isa have : available_isas()) runs = runs || have == isa;
    if (!runs) return nullptr;
    switch (isa) {
#if defined(KVSCOPE_X86_PATHS)
        case Isa::sse:
            return &sse::table;
        case Isa::avx2:
            return &avx2::table;
        case Isa::avx512:
            return &avx512::table;
        case Isa::plain:
        case Isa::simd128:
            return nullptr;
#elif defined(KVSCOPE_WASM_SIMD128)
        case Isa::simd128:
            return &simd128::table;
        default:
            return nullptr;
#else
        case Isa::plain:
            return &plain::table;
        default:
            return nullptr;
#endif
    }
    return nullptr;
}

const Kernels& active_kernels() {
    static const Kernels& k = *kernels_for(active_isa());
    return k;
}

std::string simd_path_summary() {
    const Kernels& k = active_kernels();
    std::string runs;
    for (Isa isa : available_isas()) runs += std::string(runs.empty() ? "" : ", ") + isa_name(isa);
    return std::string(isa_name(k.isa)) + " (" + std::to_string(k.lanes) +
           "-float vectors; this CPU runs " + runs + "; KVSCOPE_ISA picks another)";
}

void matmul(float* out, const float* x, const float* w, int T, int n, int d, ThreadPool* pool) {
    active_kernels().matmul(out, x, w, T, n, d, pool);
}

void matmul_compact(float* out, const float* x, GgmlType type, const unsigned char* w, int T, int n,
                    int d, ThreadPool* pool) {
    active_kernels().matmul_compact(out, x, type, w, T, n, d, pool);
}

void attention(float* out, const float* q, const float* k_cache, const float* v_cache, float* probs,
               int T, int pos0, int n_heads, int n_kv_heads, int head_dim, ThreadPool* pool,
               std::vector<float>& scratch, bool causal) {
    active_kernels().attention(out, q, k_cache, v_cache, probs, T, pos0, n_heads, n_kv_heads,
                               head_dim, pool, scratch, causal);
}

void attention_rows(float* out, const float* q, const float* const* k_rows,
                    const float* const* v_rows, float* probs, int T, int pos0, int n_heads,
                    int n_kv_heads, int head_dim, ThreadPool* pool, std::vector<float>& scratch,
                    bool causal) {
    active_kernels().attention_rows(out, q, k_rows, v_rows, probs, T, pos0, n_heads, n_kv_heads,
                                    head_dim, pool, scratch, causal);
}

void rmsnorm(float* out, const float* x, const float* w, int T, int dim, float eps) {
    active_kernels().rmsnorm(out, x, w, T, dim, eps);
}

void swiglu(float* h1, const float* h3, std::size_t n) {
    active_kernels().swiglu(h1, h3, n);
}

void add(float* x, const float* y, std::size_t n) {
    active_kernels().add(x, y, n);
}

}  // namespace kvs::cpu
