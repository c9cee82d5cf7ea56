#pragma once
// The CPU shim as the emulated backend's kernel runner (kernels/emu/kernel_runner.h): an
// EmulatedCudaBackend made with it ("cuda-shim") runs every op through the .cu files compiled as
// C++, threads of a block at once. For tests; linked from kvscope_cuda_shim only.
#include "kernels/emu/kernel_runner.h"

namespace kvs {

const KernelRunner& shim_runner();

}  // namespace kvs
