#pragma once
// What blocks of one grid, and consecutive grids on a stream, need to agree on order:
// - grid_dependency_wait / grid_launch_dependents: programmatic dependent launch (sm_90 and
//   later). A kernel launched with it may start while the kernel before it on the stream is
//   still running; it waits here, before it reads anything that kernel wrote. Elsewhere (an older
//   GPU, the emulator, the CPU shim) the launch was ordinary and these do nothing.
// - grid_fence / grid_ticket / load_shared_result: the last block of a group to finish does the
//   group's final step (decode attention's combine in the fused kernel): each block writes its
//   results, fences, and takes a ticket from a counter; the block that draws the last ticket reads
//   everyone's results (past the L1 cache, which is not kept coherent between blocks) and puts the
//   counter back to 0 for the next launch. The emulator and the shim run blocks one after another,
//   so there the last block is always the last one in grid order; the result does not depend on
//   which block is last, since the final step reads the results in a fixed order.
#include "kernels/cuda/portability.cuh"

namespace kvs::kern {

__host__ __device__ inline void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__host__ __device__ inline void grid_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__host__ __device__ inline void grid_fence() {
#if defined(__CUDA_ARCH__)
    __threadfence();
#endif
}

// The counter's value before this call's increment.
__host__ __device__ inline int grid_ticket(int* counter) {
#if defined(__CUDA_ARCH__) || defined(KVSCOPE_CUDA_SHIM)
    return atomicAdd(counter, 1);
#else
    return (*counter)++;
#endif
}

__host__ __device__ inline float load_shared_result(const float* p) {
#if defined(__CUDA_ARCH__)
    return __ldcg(p);
#else
    return *p;
#endif
}

}  // namespace kvs::kern
