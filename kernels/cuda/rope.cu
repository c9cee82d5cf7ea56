// RoPE kernel (rope.cuh).
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void rope_kernel(RopeArgs a) {
    rope_thread(this_thread(), a);
}

void launch_rope(const LaunchShape& s, Stream st, const RopeArgs& a) {
    launch_kernel(rope_kernel, s, st, a);
}

}  // namespace kvs::kern
