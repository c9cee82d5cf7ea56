// Attention kernels (attention.cuh): causal prefill, one block per (row, head), scores in dynamic
// shared memory; single-query decode split over the keys (one block per kv head and chunk of
// keys), then a combine kernel, one block per head.
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void attention_prefill_kernel(AttentionArgs a) {
    float* shared = dynamic_shared_floats();
    DeviceBlock b;
    attention_prefill_block(b, a, shared);
}

__global__ void attention_decode_split_kernel(AttentionArgs a) {
    float* shared = dynamic_shared_floats();
    DeviceBlock b;
    attention_decode_split_block(b, a, shared);
}

__global__ void attention_decode_combine_kernel(AttentionArgs a) {
    attention_decode_combine_thread(this_thread(), a);
}

int kernel_image_status() {
    cudaFuncAttributes attr{};
    return static_cast<int>(cudaFuncGetAttributes(&attr, attention_decode_split_kernel));
}

void launch_attention_prefill(const LaunchShape& s, Stream st, const AttentionArgs& a) {
    launch_kernel(attention_prefill_kernel, s, st, a);
}

void launch_attention_decode_split(const LaunchShape& s, Stream st, const AttentionArgs& a) {
    launch_kernel(attention_decode_split_kernel, s, st, a);
}

void launch_attention_decode_combine(const LaunchShape& s, Stream st, const AttentionArgs& a) {
    launch_kernel(attention_decode_combine_kernel, s, st, a);
}

}  // namespace kvs::kern
