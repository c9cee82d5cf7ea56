#pragma once
// What only device code compiles: the device side of the Block contract in block_phases.cuh (one
// real CUDA thread, a real barrier), dynamic shared memory, and the <<<grid, block>>> of a launch.
// "Device code" is nvcc's, or the same .cu files compiled as C++ by kernels/shim/ (one OS thread
// per CUDA thread, a real barrier for __syncthreads), which runs them under ThreadSanitizer.
#include "kernels/cuda/block_phases.cuh"
#include "kernels/cuda/kernel_launchers.h"
#if defined(KVSCOPE_CUDA_SHIM)
#include "kernels/shim/thread_grid.h"
#endif

namespace kvs::kern {

template <class T>
struct DeviceLocal {
    T value;
    __device__ T& operator()(const ThreadIndex&) { return value; }
};

class DeviceBlock {
  public:
    __device__ DeviceBlock() : ix_(this_thread()) {}
    __device__ Dim3 block_idx() const { return ix_.block; }
    __device__ Dim3 grid_dim() const { return ix_.grid_dim; }
    __device__ Dim3 block_dim() const { return ix_.block_dim; }
    template <class F>
    __device__ void phase(F&& f) {
        f(ix_);
        __syncthreads();
    }
    template <class T>
    __device__ DeviceLocal<T> per_thread(T init) {
        return {init};
    }
    __device__ void warp_sum(DeviceLocal<float>& v) {
        for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2)
            v.value = warp_sum_combine(v.value, __shfl_xor_sync(0xffffffffu, v.value, offset));
    }
    __device__ void warp_max(DeviceLocal<float>& v) {
        for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2)
            v.value = warp_max_combine(v.value, __shfl_xor_sync(0xffffffffu, v.value, offset));
    }

  private:
    ThreadIndex ix_;
};

// The block's dynamic shared memory (LaunchShape::shared_bytes of it).
__device__ inline float* dynamic_shared_floats() {
#if defined(KVSCOPE_CUDA_SHIM)
    return shim::dynamic_shared();
#else
    extern __shared__ float kvs_dynamic_shared[];
    return kvs_dynamic_shared;
#endif
}

inline dim3 to_dim3(Dim3 v) {
    return {v.x, v.y, v.z};
}

// kernel<<<grid, block, dynamic shared bytes, stream>>>(a); under the shim, the grid's blocks one
// after another, each block's threads at once. `dependent`: launched with programmatic stream
// serialization (sm_90 and later; the caller checks the device), so the kernel may start before
// the one before it on the stream ends; it waits in grid_dependency_wait (grid_order.cuh). A
// refused launch is left in cudaGetLastError for the caller.
template <class Args>
void launch_kernel(void (*kernel)(Args), const LaunchShape& s, Stream st, const Args& a,
                   bool dependent = false) {
#if defined(KVSCOPE_CUDA_SHIM)
    (void)st;
    (void)dependent;
    shim::run_grid(s, [&] { kernel(a); });
#else
    if (dependent) {
        cudaLaunchAttribute attr[1] = {};
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = to_dim3(s.grid);
        cfg.blockDim = to_dim3(s.block);
        cfg.dynamicSmemBytes = s.shared_bytes;
        cfg.stream = st;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        cudaLaunchKernelEx(&cfg, kernel, a);
        return;
    }
    // (clang-format would split the >>> here, in a template)
    // clang-format off
    kernel<<<to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, st>>>(a);
    // clang-format on
#endif
}

}  // namespace kvs::kern
