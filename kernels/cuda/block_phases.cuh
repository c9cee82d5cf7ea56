#pragma once
// Kernels whose threads cooperate through shared memory are written once, as a template over a
// Block, and run either on a GPU or in the CPU emulator:
//
//   b.phase(f)              every thread of the block runs f(ThreadIndex), then all meet at a
//                           barrier. On the device: f(this thread); __syncthreads(). In the
//                           emulator (kernels/emu/host_block.h): f for each thread in turn.
//   b.per_thread<T>(init)   a per-thread variable that lives across phases (a register on the
//                           device, one slot per thread in the emulator); v(ix) is this thread's.
//   b.block_idx(), b.block_dim(), b.grid_dim()   the block-uniform built-ins, usable between
//                           phases.
//   b.warp_sum(v), b.warp_max(v)   v a per_thread<float>: within each warp (kWarpSize threads in
//                           CUDA's linear order) every lane ends with the sum (max) of the warp's
//                           values, combined by the butterfly: offsets 16, 8, 4, 2, 1, each lane
//                           taking combine(its value, the value of lane ^ offset). On the device
//                           __shfl_xor_sync, no shared memory and no barrier; in the emulator the
//                           same order, lane by lane, so the bits are the same. The block must be
//                           whole warps, and every thread of it must take part.
//
// A phase must not read what another thread writes in the same phase (that would be a data race
// on the GPU too); the emulator can run the threads of a phase in reverse order to catch that.
// Returning early from f only ends that thread's phase, so no thread ever skips a barrier.
#include "kernels/cuda/portability.cuh"

namespace kvs::kern {

constexpr unsigned kWarpSize = 32;

// What one butterfly step of warp_sum / warp_max does with a lane's value and its partner's.
__host__ __device__ inline float warp_sum_combine(float mine, float other) {
    return mine + other;
}
__host__ __device__ inline float warp_max_combine(float mine, float other) {
    return other > mine ? other : mine;
}

// One step of a shared-memory tree reduction over `part` (one slot per thread, a power-of-two
// number of them): the first `stride` slots absorb the next `stride`. Strides n/2, n/4, .., 1,
// a barrier after each, leave the result in part[0].
__host__ __device__ inline void tree_sum_step(float* part, unsigned tid, unsigned stride) {
    if (tid < stride) part[tid] += part[tid + stride];
}
__host__ __device__ inline void tree_max_step(float* part, unsigned tid, unsigned stride) {
    if (tid < stride && part[tid + stride] > part[tid]) part[tid] = part[tid + stride];
}

}  // namespace kvs::kern
