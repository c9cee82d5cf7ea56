#pragma once
// Deterministic test inputs: n floats uniform in [-scale, scale) from a seeded mt19937.
#include <cstdint>
#include <random>
#include <vector>

namespace kvs::test {

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

}  // namespace kvs::test
