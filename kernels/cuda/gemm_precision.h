#pragma once
// The precision of the cuda backend's matmuls of more than one row (cuBLAS,
// kernels/cuda/cublas_gemm.h), --gemm: float32 by default; TF32 or BF16 tensor cores on request
// (float32 in and out, the inputs rounded to 10 or 7 bits of mantissa inside the product).
#include <string>

namespace kvs {

enum class GemmPrecision { F32, TF32, BF16 };

inline const char* gemm_precision_name(GemmPrecision p) {
    switch (p) {
        case GemmPrecision::F32:
            return "fp32";
        case GemmPrecision::TF32:
            return "tf32";
        case GemmPrecision::BF16:
            return "bf16";
    }
    return "?";
}

// "fp32", "tf32" or "bf16"; false for anything else.
inline bool gemm_precision_from_name(const std::string& name, GemmPrecision& out) {
    for (GemmPrecision p : {GemmPrecision::F32, GemmPrecision::TF32, GemmPrecision::BF16})
        if (name == gemm_precision_name(p)) {
            out = p;
            return true;
        }
    return false;
}

}  // namespace kvs
