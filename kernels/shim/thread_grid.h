#pragma once
// The CPU shim's launch: a kernel of kernels/cuda/*.cu, compiled as C++ with cuda_shim.h, run with
// one OS thread per CUDA thread of a block. Blocks run one after another (the same team of threads
// plays each in turn, meeting at a barrier between blocks), so shared memory is the block's alone.
// What it checks that the phase-by-phase emulator (kernels/emu/) cannot: threads of a block
// really run at once, so ThreadSanitizer sees every access two of them make to the same cell
// without a barrier or an atomic between them.
#include <functional>

#include "kernels/cuda/launch_shapes.h"

namespace kvs::shim {

// Runs body (the kernel call) once per CUDA thread of every block of s, each with its built-ins
// set. Throws std::logic_error for a shape a GPU would refuse (as the emulator does).
void run_grid(const kern::LaunchShape& s, const std::function<void()>& body);

// This block's dynamic shared memory: s.shared_bytes of NaN at the start of every block.
float* dynamic_shared();

}  // namespace kvs::shim
