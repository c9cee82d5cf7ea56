// RMSNorm kernel (rmsnorm.cuh): one block per row, a shared-memory reduction.
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void rmsnorm_kernel(RmsNormArgs a) {
    __shared__ RmsNormShared sm;
    DeviceBlock b;
    rmsnorm_block(b, a, sm);
}

void launch_rmsnorm(const LaunchShape& s, Stream st, const RmsNormArgs& a) {
    launch_kernel(rmsnorm_kernel, s, st, a);
}

}  // namespace kvs::kern
