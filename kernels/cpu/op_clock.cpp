#include "kernels/cpu/op_clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace kvs::cpu {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
}

bool invariant_tsc() {
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    // CPUID 0x80000007, EDX bit 8: the TSC ticks at a constant rate in every power state
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#else
    return false;
#endif
}

}  // namespace

OpClock::OpClock() : tsc_(invariant_tsc()), tick0_(now()), wall0_(Clock::now()) {}

std::uint64_t OpClock::now() const {
#if defined(__x86_64__)
    if (tsc_) return __rdtsc();
#endif
    return steady_ns();
}

double OpClock::seconds(std::uint64_t ticks) const {
    if (!tsc_) return ticks * 1e-9;
    const double wall = std::chrono::duration<double>(Clock::now() - wall0_).count();
    const std::uint64_t elapsed = now() - tick0_;
    return elapsed > 0 ? ticks * (wall / static_cast<double>(elapsed)) : 0.0;
}

}  // namespace kvs::cpu
