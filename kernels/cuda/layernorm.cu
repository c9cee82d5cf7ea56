// LayerNorm kernel (layernorm.cuh): one block per row, two shared-memory reductions.
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void layernorm_kernel(LayerNormArgs a) {
    __shared__ LayerNormShared sm;
    DeviceBlock b;
    layernorm_block(b, a, sm);
}

void launch_layernorm(const LaunchShape& s, Stream st, const LayerNormArgs& a) {
    launch_kernel(layernorm_kernel, s, st, a);
}

}  // namespace kvs::kern
