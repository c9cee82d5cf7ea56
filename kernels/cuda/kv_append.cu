// KV-cache append kernel (kv_append.cuh).
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void kv_append_kernel(KvAppendArgs a) {
    kv_append_thread(this_thread(), a);
}

void launch_kv_append(const LaunchShape& s, Stream st, const KvAppendArgs& a) {
    launch_kernel(kv_append_kernel, s, st, a);
}

}  // namespace kvs::kern
