// The kernel files of kernels/cuda/, unchanged, compiled as C++ for the CPU shim: cuda_shim.h
// first stands in for what nvcc provides. kernel_launchers.h's launch_* functions then run each
// kernel with one OS thread per CUDA thread (thread_grid.h). Not linked with the nvcc-built ones:
// the shim library is for the tests in tests/cuda/test_cuda_shim.cpp.
#include "kernels/shim/cuda_shim.h"
// ^ first, in an include block of its own: what nvcc would provide, before any kernel file
#include "kernels/cuda/attention.cu"
#include "kernels/cuda/elementwise.cu"
#include "kernels/cuda/embed.cu"
#include "kernels/cuda/fused_decode.cu"
#include "kernels/cuda/kv_append.cu"
#include "kernels/cuda/layernorm.cu"
#include "kernels/cuda/matmul.cu"
#include "kernels/cuda/rmsnorm.cu"
#include "kernels/cuda/rope.cu"
