// The fused decode kernels (fused_decode.cuh): five a layer and one a token for one sequence's
// decode step, each a launch of the op-by-op kernels' own bodies.
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void fused_norm_qkv_kernel(FusedQkvArgs a) {
    __shared__ RmsNormShared sm;
    float* stage = dynamic_shared_floats();
    DeviceBlock b;
    fused_norm_qkv_block(b, a, sm, stage);
}

__global__ void fused_attention_kernel(FusedAttentionArgs a) {
    float* shared = dynamic_shared_floats();
    DeviceBlock b;
    fused_attention_block(b, a, shared);
}

__global__ void fused_matvec_add_kernel(FusedMatvecAddArgs a) {
    DeviceBlock b;
    fused_matvec_add_block(b, a);
}

__global__ void fused_norm_gate_up_kernel(FusedGateUpArgs a) {
    __shared__ RmsNormShared sm;
    float* stage = dynamic_shared_floats();
    DeviceBlock b;
    fused_norm_gate_up_block(b, a, sm, stage);
}

__global__ void fused_norm_logits_kernel(FusedLogitsArgs a) {
    __shared__ RmsNormShared sm;
    float* stage = dynamic_shared_floats();
    DeviceBlock b;
    fused_norm_logits_block(b, a, sm, stage);
}

void launch_fused_norm_qkv(const LaunchShape& s, Stream st, const FusedQkvArgs& a, bool dependent) {
    launch_kernel(fused_norm_qkv_kernel, s, st, a, dependent);
}

void launch_fused_attention(const LaunchShape& s, Stream st, const FusedAttentionArgs& a,
                            bool dependent) {
    launch_kernel(fused_attention_kernel, s, st, a, dependent);
}

void launch_fused_matvec_add(const LaunchShape& s, Stream st, const FusedMatvecAddArgs& a,
                             bool dependent) {
    launch_kernel(fused_matvec_add_kernel, s, st, a, dependent);
}

void launch_fused_norm_gate_up(const LaunchShape& s, Stream st, const FusedGateUpArgs& a,
                               bool dependent) {
    launch_kernel(fused_norm_gate_up_kernel, s, st, a, dependent);
}

void launch_fused_norm_logits(const LaunchShape& s, Stream st, const FusedLogitsArgs& a,
                              bool dependent) {
    launch_kernel(fused_norm_logits_kernel, s, st, a, dependent);
}

}  // namespace kvs::kern
