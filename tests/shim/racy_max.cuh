#pragma once
// A deliberately wrong kernel, for the tests of the CPU shim (kernels/shim/): the maximum of
// x[0..n) kept in one shared cell that every thread updates with a plain read-compare-write, no
// atomic. Run one thread at a time (the phase-by-phase emulator, in either order) it is always
// right; on a GPU two threads can both read the old maximum and the smaller write can land last.
// ThreadSanitizer sees that only when the threads really run at once: under the shim.
// Launch: grid 1, block kRaceThreads; shared: one float.
#include <math.h>

#include "kernels/cuda/block_phases.cuh"

namespace kvs::race_demo {

using kern::ThreadIndex;

constexpr unsigned kRaceThreads = 64;

struct MaxArgs {
    float* out;      // [1]
    const float* x;  // [n]
    int n;
};

// The bug: *m is read and written by every thread of the phase with nothing ordering them.
__host__ __device__ inline void racy_max_update(const ThreadIndex& ix, const MaxArgs& a, float* m) {
    for (int i = static_cast<int>(ix.thread.x); i < a.n; i += static_cast<int>(ix.block_dim.x))
        if (a.x[i] > *m) *m = a.x[i];
}

template <class Block>
__host__ __device__ void racy_max_block(Block& b, const MaxArgs& a, float* m) {
    b.phase([&](const ThreadIndex& ix) {
        if (ix.thread.x == 0) *m = -INFINITY;
    });
    b.phase([&](const ThreadIndex& ix) { racy_max_update(ix, a, m); });
    b.phase([&](const ThreadIndex& ix) {
        if (ix.thread.x == 0) *a.out = *m;
    });
}

// The same reduction done right, over ints with atomicMax (device code only: the emulator has no
// atomics), as the control: the shim under ThreadSanitizer must pass it.
struct IntMaxArgs {
    int* out;      // [1]
    const int* x;  // [n]
    int n;
};

void launch_racy_max(const MaxArgs& a);
void launch_atomic_max(const IntMaxArgs& a);

}  // namespace kvs::race_demo
