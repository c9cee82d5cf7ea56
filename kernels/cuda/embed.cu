// Embedding gather kernel (embed.cuh).
#include "kernels/cuda/device_side.cuh"
#include "kernels/cuda/kernel_launchers.h"

namespace kvs::kern {

__global__ void embed_kernel(EmbedArgs a) {
    embed_thread(this_thread(), a);
}

void launch_embed(const LaunchShape& s, Stream st, const EmbedArgs& a) {
    launch_kernel(embed_kernel, s, st, a);
}

}  // namespace kvs::kern
