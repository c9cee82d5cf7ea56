// SwiGLU, GELU, residual-add and widening kernels (elementwise.cuh).
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void swiglu_kernel(SwigluArgs a) {
    swiglu_thread(this_thread(), a);
}
__global__ void gelu_kernel(GeluArgs a) {
    gelu_thread(this_thread(), a);
}
__global__ void add_kernel(AddArgs a) {
    add_thread(this_thread(), a);
}
__global__ void widen_kernel(WidenArgs a) {
    widen_thread(this_thread(), a);
}

void launch_swiglu(const LaunchShape& s, Stream st, const SwigluArgs& a) {
    launch_kernel(swiglu_kernel, s, st, a);
}

void launch_gelu(const LaunchShape& s, Stream st, const GeluArgs& a) {
    launch_kernel(gelu_kernel, s, st, a);
}

void launch_add(const LaunchShape& s, Stream st, const AddArgs& a) {
    launch_kernel(add_kernel, s, st, a);
}

void launch_widen(const LaunchShape& s, Stream st, const WidenArgs& a) {
    launch_kernel(widen_kernel, s, st, a);
}

}  // namespace kvs::kern
