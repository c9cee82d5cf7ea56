// cuda_shim.h first, as in shim_kernels.cpp: the kernel headers read as the shim reads them.
#include "kernels/shim/cuda_shim.h"
// ^ first, in an include block of its own
#include "kernels/cuda/kernel_launchers.h"
#include "kernels/shim/shim_runner.h"

namespace kvs {
namespace {

using kern::LaunchShape;

// The shim's launchers take a stream (none here) and, for the fused kernels, whether to launch
// them dependent (no meaning on the CPU).
template <class A, void (*Launch)(const LaunchShape&, kern::Stream, const A&)>
void plain(const LaunchShape& s, const A& a) {
    Launch(s, nullptr, a);
}
template <class A, void (*Launch)(const LaunchShape&, kern::Stream, const A&, bool)>
void fused(const LaunchShape& s, const A& a) {
    Launch(s, nullptr, a, false);
}
// A fault part-way is the emulator's to play: the shim runs every block.
void fused_attention(const LaunchShape& s, const kern::FusedAttentionArgs& a, int) {
    kern::launch_fused_attention(s, nullptr, a, false);
}

}  // namespace

const KernelRunner& shim_runner() {
    static const KernelRunner r{
        "cuda-shim",
        "CPU shim: the .cu files as C++, one OS thread per CUDA thread (not GPU times)",
        plain<kern::EmbedArgs, kern::launch_embed>,
        plain<kern::RmsNormArgs, kern::launch_rmsnorm>,
        plain<kern::LayerNormArgs, kern::launch_layernorm>,
        plain<kern::MatmulArgs, kern::launch_matmul_tiled>,
        plain<kern::MatmulArgs, kern::launch_matvec>,
        plain<kern::RopeArgs, kern::launch_rope>,
        plain<kern::KvAppendArgs, kern::launch_kv_append>,
        plain<kern::AttentionArgs, kern::launch_attention_prefill>,
        plain<kern::AttentionArgs, kern::launch_attention_decode_split>,
        plain<kern::AttentionArgs, kern::launch_attention_decode_combine>,
        plain<kern::SwigluArgs, kern::launch_swiglu>,
        plain<kern::GeluArgs, kern::launch_gelu>,
        plain<kern::AddArgs, kern::launch_add>,
        fused<kern::FusedQkvArgs, kern::launch_fused_norm_qkv>,
        fused_attention,
        fused<kern::FusedMatvecAddArgs, kern::launch_fused_matvec_add>,
        fused<kern::FusedGateUpArgs, kern::launch_fused_norm_gate_up>,
        fused<kern::FusedLogitsArgs, kern::launch_fused_norm_logits>,
    };
    return r;
}

}  // namespace kvs
