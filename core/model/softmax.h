#pragma once
// softmax, the one CPU implementation: the attention weights of the reference op and the toy, the
// next-token distribution the sampler draws from and the step records, a row rebuilt from the
// trace to check the kernel's weights, a lesson's token probability.
//
//   out[i] = exp(x[i] - max) / sum_j exp(x[j] - max)
//
// The max is subtracted so that the largest exponent is 0 and no term overflows (run.c's
// softmax). A key masked with -inf gets exactly 0. When every x is -inf (no key may be attended
// to) there is no distribution: out is all 0 and the function returns false.
// The SIMD attention (kernels/cpu/fast_attention.cpp) and the CUDA kernels keep their own: one
// works a vector of lanes at a time with its own exp, the other is a device body folded into the
// flash-style pass; both are tested against this one through the reference op.
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>

namespace kvs {

namespace detail {
template <class T>
bool softmax(std::span<const T> x, std::span<T> out) {
    T mx = -std::numeric_limits<T>::infinity();
    for (T v : x) mx = v > mx ? v : mx;
    if (x.empty() || mx == -std::numeric_limits<T>::infinity()) {
        for (T& p : out) p = 0;
        return false;
    }
    T sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        out[i] = std::exp(x[i] - mx);
        sum += out[i];
    }
    for (std::size_t i = 0; i < x.size(); ++i) out[i] /= sum;
    return true;
}
}  // namespace detail

// x and out: [n] (the same span is fine: each x[i] is read before out[i] is written). float for
// the model's rows, double where a view recomputes a row.
inline bool softmax(std::span<const float> x, std::span<float> out) {
    return detail::softmax(x, out);
}
inline bool softmax(std::span<const double> x, std::span<double> out) {
    return detail::softmax(x, out);
}
// In place: x = softmax(x).
inline bool softmax(std::span<float> x) {
    return detail::softmax<float>(x, x);
}
inline bool softmax(std::span<double> x) {
    return detail::softmax<double>(x, x);
}

}  // namespace kvs
