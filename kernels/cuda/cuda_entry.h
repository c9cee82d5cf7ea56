#pragma once
// The CUDA backend as plain C++, for code built without nvcc (the backend factory). Defined in
// cuda_backend.cu; linked only when the build has CUDA (KVSCOPE_HAVE_CUDA).
#include <memory>
#include <string>

#include "core/model/backend.h"
#include "kernels/cuda/launch_shapes.h"

namespace kvs {

// Empty when device 0 answers; else why not, in the CUDA runtime's words (e.g. "CUDA driver
// version is insufficient for CUDA runtime version") or "no CUDA device found".
std::string cuda_device_problem();
// The "cuda" backend on device 0. Throws kvs::Error when the device cannot be set up.
std::unique_ptr<Backend> make_cuda_backend();
// The block sizes a "cuda" backend launches with (kern::block_variants); false for another backend.
bool set_cuda_block_sizes(Backend& be, const kern::BlockSizes& b);

}  // namespace kvs
