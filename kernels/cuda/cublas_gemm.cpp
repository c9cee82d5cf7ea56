#include "kernels/cuda/cublas_gemm.h"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>
#include <vector>

#ifndef KVSCOPE_CUBLAS_DIR
#define KVSCOPE_CUBLAS_DIR ""
#endif

namespace kvs {
namespace {

using CreateFn = cublasStatus_t (*)(cublasHandle_t*);
using DestroyFn = cublasStatus_t (*)(cublasHandle_t);
using SetStreamFn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);

}  // namespace

CublasGemm::CublasGemm() {
    const std::string so = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    std::vector<std::string> tries{so};
    if (std::string(KVSCOPE_CUBLAS_DIR).size() > 0)
        tries.push_back(std::string(KVSCOPE_CUBLAS_DIR) + "/" + so);
    tries.push_back("/usr/local/cuda/lib64/" + so);
    for (const std::string& t : tries)
        if ((lib_ = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib_) {
        problem_ = so + " not found (the tiled matmul kernel runs instead)";
        return;
    }
    const auto create = reinterpret_cast<CreateFn>(dlsym(lib_, "cublasCreate_v2"));
    destroy_ = dlsym(lib_, "cublasDestroy_v2");
    set_stream_ = dlsym(lib_, "cublasSetStream_v2");
    gemm_ex_ = dlsym(lib_, "cublasGemmEx");
    cublasHandle_t h = nullptr;
    if (!create || !destroy_ || !set_stream_ || !gemm_ex_) {
        problem_ = so + " lacks cublasGemmEx";
    } else if (const cublasStatus_t s = create(&h); s != CUBLAS_STATUS_SUCCESS) {
        problem_ = "cublasCreate failed (status " + std::to_string(int(s)) + ")";
    } else {
        handle_ = h;
        return;
    }
    dlclose(lib_);
    lib_ = nullptr;
}

CublasGemm::~CublasGemm() {
    close();
}

void CublasGemm::close() noexcept {
    if (handle_) reinterpret_cast<DestroyFn>(destroy_)(static_cast<cublasHandle_t>(handle_));
    handle_ = nullptr;
    // The library stays loaded: cuBLAS keeps state until the process ends.
}

std::string CublasGemm::gemm(CUstream_st* stream, float* out, const float* x, const float* w, int T,
                             int n, int d, GemmPrecision p) {
    const auto h = static_cast<cublasHandle_t>(handle_);
    if (const cublasStatus_t s = reinterpret_cast<SetStreamFn>(set_stream_)(h, stream);
        s != CUBLAS_STATUS_SUCCESS)
        return "cublasSetStream: status " + std::to_string(int(s));
    // Column-major view: out^T [d, T] = w [d, n] (w^T stored, hence op T) x^T [n, T].
    const float one = 1.0f, zero = 0.0f;
    const cublasComputeType_t compute = p == GemmPrecision::TF32   ? CUBLAS_COMPUTE_32F_FAST_TF32
                                        : p == GemmPrecision::BF16 ? CUBLAS_COMPUTE_32F_FAST_16BF
                                                                   : CUBLAS_COMPUTE_32F;
    const cublasStatus_t s = reinterpret_cast<GemmExFn>(gemm_ex_)(
        h, CUBLAS_OP_T, CUBLAS_OP_N, d, T, n, &one, w, CUDA_R_32F, n, x, CUDA_R_32F, n, &zero, out,
        CUDA_R_32F, d, compute, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? std::string()
                                      : "cublasGemmEx: status " + std::to_string(int(s));
}

}  // namespace kvs
