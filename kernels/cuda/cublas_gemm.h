#pragma once
// cuBLAS for the matmuls of more than one row (prefill, every uncached step) on the cuda backend.
// The library is loaded when the backend starts (dlopen of libcublas.so.N, N the CUDA major this
// build was made with), not linked: a binary built with nvcc still starts where it is missing,
// and the backend then keeps the tiled kernel (kernels/cuda/matmul.cuh) and says why.
// Precision (kernels/cuda/gemm_precision.h): cuBLAS's CUBLAS_COMPUTE_32F, or its
// CUBLAS_COMPUTE_32F_FAST_TF32 and _FAST_16BF compute types.
#include <string>

#include "kernels/cuda/gemm_precision.h"

struct CUstream_st;

namespace kvs {

class CublasGemm {
  public:
    CublasGemm();  // never throws: problem() says why it cannot be used
    ~CublasGemm();
    CublasGemm(const CublasGemm&) = delete;
    CublasGemm& operator=(const CublasGemm&) = delete;
    // Destroys the handle (it may wait for the stream it was last given): before that stream goes.
    void close() noexcept;
    bool ready() const { return handle_ != nullptr; }
    const std::string& problem() const { return problem_; }
    // out[T, d] = x[T, n] w[d, n]^T, row-major float32 in device memory, queued on `stream`.
    // Empty when queued; else cuBLAS's status, in words.
    std::string gemm(CUstream_st* stream, float* out, const float* x, const float* w, int T, int n,
                     int d, GemmPrecision p);

  private:
    void* lib_ = nullptr;
    void* handle_ = nullptr;
    std::string problem_;
    void* gemm_ex_ = nullptr;
    void* set_stream_ = nullptr;
    void* destroy_ = nullptr;
};

}  // namespace kvs
