// The row-wise and element-wise ops: rmsnorm, SwiGLU, residual add (RoPE: rope_table.cpp).
#include <cmath>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/vec_math.h"

namespace kvs::cpu::KVS_ISA_NS {

void rmsnorm(float* out, const float* x, const float* w, int T, int dim, float eps) {
    for (int t = 0; t < T; ++t) {
        const float* xr = x + std::size_t(t) * dim;
        float* o = out + std::size_t(t) * dim;
        // ggml's rms_norm: the mean of the squares (summed in double) rounded to float, then the
        // scale in float, so the integer paths round the same row to Q8_K as llama.cpp does.
        const float mean = float(sum_squares(xr, dim) / dim);
        const float ss = 1.0f / std::sqrt(mean + eps);
        for (int j = 0; j < dim; ++j) o[j] = w[j] * (ss * xr[j]);
    }
}

void swiglu(float* h1, const float* h3, std::size_t n) {
    // silu(v) * h3 = v / (1 + exp(-v)) * h3, kLanes elements at a time
    auto block = [](const Vec& v, const Vec& h) __attribute__((always_inline)) {
        return v * (1.0f / (1.0f + exp_approx(-v))) * h;
    };
    std::size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) store(h1 + i, block(load(h1 + i), load(h3 + i)));
    if (i < n) {
        const int rest = static_cast<int>(n - i);
        store_partial(h1 + i, block(load_partial(h1 + i, rest), load_partial(h3 + i, rest)), rest);
    }
}

void add(float* x, const float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace kvs::cpu::KVS_ISA_NS
