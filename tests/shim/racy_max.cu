// The kernels of racy_max.cuh, written as the kernels of kernels/cuda/ are, compiled for the CPU
// shim only (tests/shim/race_main.cpp). Not built by nvcc: it exists to be caught.
#include <limits.h>

#include "kernels/cuda/device_side.cuh"
#include "tests/shim/racy_max.cuh"

namespace kvs::race_demo {

using kern::DeviceBlock;

__global__ void racy_max_kernel(MaxArgs a) {
    __shared__ float m;
    DeviceBlock b;
    racy_max_block(b, a, &m);
}

__global__ void atomic_max_kernel(IntMaxArgs a) {
    __shared__ int m;
    DeviceBlock b;
    b.phase([&](const ThreadIndex& ix) {
        if (ix.thread.x == 0) m = INT_MIN;
    });
    b.phase([&](const ThreadIndex& ix) {
        for (int i = static_cast<int>(ix.thread.x); i < a.n; i += static_cast<int>(ix.block_dim.x))
            atomicMax(&m, a.x[i]);
    });
    b.phase([&](const ThreadIndex& ix) {
        if (ix.thread.x == 0) *a.out = m;
    });
}

const kern::LaunchShape kShape{{1, 1, 1}, {kRaceThreads, 1, 1}, 0};

void launch_racy_max(const MaxArgs& a) {
    kern::launch_kernel(racy_max_kernel, kShape, nullptr, a);
}

void launch_atomic_max(const IntMaxArgs& a) {
    kern::launch_kernel(atomic_max_kernel, kShape, nullptr, a);
}

}  // namespace kvs::race_demo
