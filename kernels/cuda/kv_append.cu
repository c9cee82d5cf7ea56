// KV-cache append kernel (kv_append.cuh).
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void kv_append_kernel(KvAppendArgs a) {
    kv_append_thread(this_thread(), a);
}

void launch_kv_append(const LaunchShape& s, Stream st, const KvAppendArgs& a) {
    kv_append_kernel<<<to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, st>>>(a);
}

}  // namespace kvs::kern
