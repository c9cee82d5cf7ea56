#pragma once
// splitmix64 (Steele, Lea, Flood 2014): one 64-bit word per call from a counter state, well mixed
// even from state 0, and the same stream on every platform (std distributions are not). One
// implementation for the sampler's seed 0 and make-model's random weights.
#include <cstdint>

namespace kvs {

// Advances `state` and returns the next word.
inline std::uint64_t splitmix64_next(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace kvs
