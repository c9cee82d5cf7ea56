#pragma once
// One SIMD path's fast ops, as a table the dispatcher (fast_ops.cpp) picks from once. Each path
// is the same sources (fast_matmul.cpp, fast_attention.cpp, fast_pointwise.cpp,
// machine_probes.cpp) compiled with its own -m flags into namespace kvs::cpu::KVS_ISA_NS (see
// kernels/CMakeLists.txt); isa_table.cpp fills the table. The signatures are fast_ops.h's.
#include "kernels/cpu/fast_ops.h"
#include "kernels/cpu/isa.h"

namespace kvs::cpu {

// Probes for machine_limits.cpp, compiled per path so that `bench --limits` measures the vectors
// the chosen path runs. fma_chains: multiply-adds on vectors of `width` (8 or 16) floats, returns
// a value the compiler cannot drop and sets flops; read_stream: the sum of n floats (n % 64 == 0).
float fma_chains(int width, long iters, float seed, double& flops);
float read_stream(const float* p, std::size_t n);

struct Kernels {
    Isa isa;
    int lanes;  // floats per partial-sum register (kLanes of vec_math.h)
    decltype(&kvs::cpu::matmul) matmul;
    decltype(&kvs::cpu::matmul_compact) matmul_compact;
    decltype(&kvs::cpu::attention) attention;
    decltype(&kvs::cpu::attention_rows) attention_rows;
    decltype(&kvs::cpu::rmsnorm) rmsnorm;
    decltype(&kvs::cpu::swiglu) swiglu;
    decltype(&kvs::cpu::add) add;
    decltype(&kvs::cpu::fma_chains) fma_chains;
    decltype(&kvs::cpu::read_stream) read_stream;
};

// The table of a path this binary has and this CPU runs (available_isas()), else null.
const Kernels* kernels_for(Isa isa);
// The table of active_isa().
const Kernels& active_kernels();
// One line for reports: "avx512 (16-float vectors; this CPU runs sse, avx2, avx512; KVSCOPE_ISA
// picks another)". Throws as active_isa() does.
std::string simd_path_summary();

#ifdef KVS_ISA_NS
// Inside one path's build: that path's definitions.
namespace KVS_ISA_NS {
decltype(kvs::cpu::matmul) matmul;
decltype(kvs::cpu::matmul_compact) matmul_compact;
decltype(kvs::cpu::attention) attention;
decltype(kvs::cpu::attention_rows) attention_rows;
decltype(kvs::cpu::rmsnorm) rmsnorm;
decltype(kvs::cpu::swiglu) swiglu;
decltype(kvs::cpu::add) add;
decltype(kvs::cpu::fma_chains) fma_chains;
decltype(kvs::cpu::read_stream) read_stream;
}  // namespace KVS_ISA_NS
#endif

}  // namespace kvs::cpu
