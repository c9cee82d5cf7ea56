#include "kernels/emu/kernel_runner.h"

namespace kvs {

const KernelRunner& emulator_runner() {
    static const KernelRunner r{
        "cuda-emulated",
        "CPU emulating CUDA launches (one thread at a time; not GPU times)",
        emu::embed,
        emu::rmsnorm,
        emu::layernorm,
        emu::matmul_tiled,
        emu::matvec,
        emu::rope,
        emu::kv_append,
        emu::attention_prefill,
        emu::attention_decode_split,
        emu::attention_decode_combine,
        emu::swiglu,
        emu::gelu,
        emu::add,
        emu::fused_norm_qkv,
        emu::fused_attention,
        emu::fused_matvec_add,
        emu::fused_norm_gate_up,
        emu::fused_norm_logits,
    };
    return r;
}

}  // namespace kvs
