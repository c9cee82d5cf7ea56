#pragma once
// Lets a kernel's per-thread code compile with nvcc and with the host compiler alike. Under nvcc
// __host__ __device__ mark a function for both sides; elsewhere they are defined away, so the
// emulated launches in kernels/emu/ can call the very same functions on the CPU.
//
// ThreadIndex carries what a thread learns from CUDA's built-in variables (gridDim, blockDim,
// blockIdx, threadIdx). Kernel bodies take it as an argument instead of reading the built-ins, so
// the emulator can hand them any thread of any block.
#if !defined(__CUDACC__)
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#endif

namespace kvs::kern {

struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
};

struct ThreadIndex {
    Dim3 grid_dim;   // blocks in the grid (gridDim)
    Dim3 block_dim;  // threads in a block (blockDim)
    Dim3 block;      // this block (blockIdx)
    Dim3 thread;     // this thread within its block (threadIdx)

    // Position of the thread in its block, x fastest (CUDA's linear thread order).
    __host__ __device__ unsigned flat_thread() const {
        return thread.x + block_dim.x * (thread.y + block_dim.y * thread.z);
    }
    __host__ __device__ unsigned block_threads() const {
        return block_dim.x * block_dim.y * block_dim.z;
    }
};

#if defined(__CUDACC__) || defined(KVSCOPE_CUDA_SHIM)
// The calling device thread's index, read from the built-ins (under kernels/shim/, per-OS-thread
// stand-ins for them).
__device__ inline ThreadIndex this_thread() {
    return {{gridDim.x, gridDim.y, gridDim.z},
            {blockDim.x, blockDim.y, blockDim.z},
            {blockIdx.x, blockIdx.y, blockIdx.z},
            {threadIdx.x, threadIdx.y, threadIdx.z}};
}
#endif

// The position a kernel works at. A launch carries it by value (pos0), or, when it was captured
// into a CUDA Graph that is replayed at every decode step, where the host writes it before each
// replay: pos_at, device memory (core/model/step_graphs.h). Args with pos_at set come back with
// pos0 read from there, so the rest of a kernel body reads pos0 alone.
template <class Args>
__host__ __device__ inline Args at_step_position(Args a) {
    if (a.pos_at) {
        a.pos0 = *a.pos_at;
        a.pos_at = nullptr;
    }
    return a;
}

// Blocks needed to cover n items with `per_block` each.
__host__ __device__ inline unsigned blocks_for(unsigned long long n, unsigned per_block) {
    return static_cast<unsigned>((n + per_block - 1) / per_block);
}

}  // namespace kvs::kern
