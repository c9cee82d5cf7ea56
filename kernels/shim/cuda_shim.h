#pragma once
// What nvcc provides to a .cu file, for the host compiler: included before a kernel file so that
// the file compiles unchanged as C++ (kernels/shim/shim_kernels.cpp). The built-ins are
// thread_local, set by run_grid (thread_grid.h) for the OS thread that plays each CUDA thread;
// __syncthreads is a real barrier across the block's threads; __shared__ variables are static, so
// every thread of the block sees the same one (blocks run one after another, never two at once).
#define KVSCOPE_CUDA_SHIM 1
#define __global__
#define __device__
#define __host__
#define __shared__ static

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
using uint3 = dim3;

extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

// Waits until every thread of the block has arrived (a pthread barrier: ThreadSanitizer knows it
// orders what comes before it in one thread before what comes after it in all of them).
void __syncthreads();

// Lane ^ lane_mask's value of v, within the calling thread's warp (all 32 lanes must call it).
float __shfl_xor_sync(unsigned mask, float v, int lane_mask);

// atomicAdd / atomicMax as CUDA defines them: the old value is returned.
int atomicMax(int* address, int val);
float atomicAdd(float* address, float val);
int atomicAdd(int* address, int val);

enum cudaError_t { cudaSuccess = 0 };
struct cudaFuncAttributes {
    int maxThreadsPerBlock = 1024;
};
// Every kernel "has an image" for the CPU.
template <class F>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, F*) {
    *attr = {};
    return cudaSuccess;
}
