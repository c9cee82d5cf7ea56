#pragma once
// What only nvcc compiles: the device side of the Block contract in block_phases.cuh (one real
// CUDA thread, a real barrier), and Dim3 as CUDA's dim3 for the <<<grid, block>>> of a launch.
#include "kernels/cuda/block_phases.cuh"

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

  private:
    ThreadIndex ix_;
};

inline dim3 to_dim3(Dim3 v) {
    return {v.x, v.y, v.z};
}

}  // namespace kvs::kern
