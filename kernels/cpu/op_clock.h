#pragma once
// The clock behind the CPU backend's per-op times. On x86-64 with an invariant time-stamp
// counter it reads the TSC: about 12 ns here, and unlike clock_gettime (21 ns, an ordered read)
// it does not wait for earlier instructions to retire, so back-to-back short ops still overlap.
// Elsewhere it is steady_clock. Ticks become seconds by the ratio of steady_clock time to ticks
// since the clock was made, so no TSC frequency is assumed.
#include <chrono>
#include <cstdint>

namespace kvs::cpu {

class OpClock {
  public:
    OpClock();
    std::uint64_t now() const;
    double seconds(std::uint64_t ticks) const;
    bool uses_tsc() const { return tsc_; }

  private:
    bool tsc_;
    std::uint64_t tick0_;
    std::chrono::steady_clock::time_point wall0_;
};

}  // namespace kvs::cpu
