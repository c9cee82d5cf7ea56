// RoPE kernel (rope.cuh).
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void rope_kernel(RopeArgs a) {
    rope_thread(this_thread(), a);
}

void launch_rope(const LaunchShape& s, Stream st, const RopeArgs& a) {
    rope_kernel<<<to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, st>>>(a);
}

}  // namespace kvs::kern
