// Matmul kernels (matmul.cuh): shared-memory tiles for prefill, matrix-vector (warp sums) for
// decode.
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void matmul_tiled_kernel(MatmulArgs a) {
    __shared__ MatmulTiles sm;
    DeviceBlock b;
    matmul_tiled_block(b, a, sm);
}

__global__ void matvec_kernel(MatmulArgs a) {
    DeviceBlock b;
    matvec_block(b, a);
}

void launch_matmul_tiled(const LaunchShape& s, Stream st, const MatmulArgs& a) {
    launch_kernel(matmul_tiled_kernel, s, st, a);
}

void launch_matvec(const LaunchShape& s, Stream st, const MatmulArgs& a) {
    launch_kernel(matvec_kernel, s, st, a);
}

}  // namespace kvs::kern
