#include "core/model/rope_frequencies.h"

#include <cmath>
#include <string>

#include "core/util/error.h"

namespace kvs {
namespace {

constexpr double kPi = 3.14159265358979323846;  // (no <numbers>: the web build's libc++ is older)

}  // namespace

std::vector<float> rope_inverse_frequencies(const ModelConfig& c) {
    const int hd = c.head_dim(), pairs = hd / 2;
    std::vector<float> inv(pairs);
    for (int p = 0; p < pairs; ++p) {
        inv[p] = 1.0f / std::pow(c.rope_theta, (2 * p) / static_cast<float>(hd));
        if (!c.rope_factors.empty()) inv[p] /= c.rope_factors[p];
    }
    return inv;
}

std::vector<float> llama3_rope_factors(int head_dim, float theta, double factor,
                                       double low_freq_factor, double high_freq_factor,
                                       double original_context) {
    auto bad = [](const std::string& what) {
        throw Error("rope scaling 'llama3': " + what + " is not usable");
    };
    if (!(factor >= 1 && factor <= 1e6)) bad("factor " + std::to_string(factor));
    if (!(low_freq_factor > 0 && high_freq_factor > low_freq_factor && high_freq_factor <= 1e6))
        bad("low_freq_factor " + std::to_string(low_freq_factor) + " with high_freq_factor " +
            std::to_string(high_freq_factor));
    if (!(original_context >= 1 && original_context <= 1e9))
        bad("original_max_position_embeddings " + std::to_string(original_context));
    const double low_wavelength = original_context / low_freq_factor;
    const double high_wavelength = original_context / high_freq_factor;
    std::vector<float> f(head_dim / 2);
    for (int p = 0; p < head_dim / 2; ++p) {
        const double inv = 1.0 / std::pow(double(theta), 2.0 * p / head_dim);
        const double wavelength = 2 * kPi / inv;
        if (wavelength < high_wavelength) {
            f[p] = 1.0f;
        } else if (wavelength > low_wavelength) {
            f[p] = static_cast<float>(factor);
        } else {
            const double s = (original_context / wavelength - low_freq_factor) /
                             (high_freq_factor - low_freq_factor);
            f[p] = static_cast<float>(1.0 / ((1 - s) / factor + s));
        }
    }
    return f;
}

}  // namespace kvs
