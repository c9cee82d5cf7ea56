// The table of one SIMD path (isa_kernels.h), compiled with that path's flags.
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/vec_math.h"

namespace kvs::cpu::KVS_ISA_NS {

extern const Kernels table;
const Kernels table = {
    Isa::KVS_ISA_NS, kLanes,  &matmul, &matmul_compact, &attention,  &attention_rows,
    &rmsnorm,        &swiglu, &add,    &fma_chains,     &read_stream};

}  // namespace kvs::cpu::KVS_ISA_NS
