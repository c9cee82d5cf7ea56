// Attention kernels (attention.cuh): causal prefill, one block per (row, head); single-query
// decode, one block per kv head group. Scores live in dynamic shared memory.
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void attention_prefill_kernel(AttentionArgs a) {
    float* shared = dynamic_shared_floats();
    DeviceBlock b;
    attention_prefill_block(b, a, shared);
}

__global__ void attention_decode_kernel(AttentionArgs a) {
    float* shared = dynamic_shared_floats();
    DeviceBlock b;
    attention_decode_block(b, a, shared);
}

int kernel_image_status() {
    cudaFuncAttributes attr{};
    return static_cast<int>(cudaFuncGetAttributes(&attr, attention_decode_kernel));
}

void launch_attention_prefill(const LaunchShape& s, Stream st, const AttentionArgs& a) {
    launch_kernel(attention_prefill_kernel, s, st, a);
}

void launch_attention_decode(const LaunchShape& s, Stream st, const AttentionArgs& a) {
    launch_kernel(attention_decode_kernel, s, st, a);
}

}  // namespace kvs::kern
