// Configure-time probe (cmake/kvscope_cuda.cmake): exits 0 when a CUDA device answers, printing
// its name, else 1 with the CUDA runtime's reason.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        std::printf("%s\n", cudaGetErrorString(e));
        return 1;
    }
    if (n == 0) {
        std::printf("no CUDA device found\n");
        return 1;
    }
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, 0);
    std::printf("%s\n", p.name);
    return 0;
}
