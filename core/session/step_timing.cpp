#include "core/session/step_timing.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace kvs {

void before_timed_run() {
    std::this_thread::yield();
}

namespace {

// The median (an even count: the mean of the middle two), fastest and slowest of some runs.
StepTiming summarise(std::vector<double> s) {
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    StepTiming t;
    t.runs = static_cast<int>(n);
    if (n == 0) return t;
    t.min = s.front();
    t.max = s.back();
    t.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    return t;
}

}  // namespace

InTurn time_in_turn(const TimingPolicy& policy, bool short_step, const std::function<double()>& a,
                    const std::function<double()>& b) {
    const int rounds = short_step ? std::max(2, policy.runs + policy.runs % 2) : 2;
    std::vector<double> ta, tb;
    for (int r = 0; r < rounds; ++r) {
        before_timed_run();
        if (r % 2 == 0) {
            tb.push_back(b());
            ta.push_back(a());
        } else {
            ta.push_back(a());
            tb.push_back(b());
        }
    }
    return {summarise(std::move(ta)), summarise(std::move(tb))};
}

StepTiming retime_step(const TimingPolicy& policy, double first, const OpTimes& first_ops,
                       Backend* be, const std::function<void()>& again, double hint) {
    return retime_step_timed(
        policy, first, first_ops, be,
        [&] {
            if (be) be->reset_op_times();
            before_timed_run();
            const auto t0 = std::chrono::steady_clock::now();
            again();
            if (be) be->synchronize();
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        },
        hint);
}

StepTiming retime_step_timed(const TimingPolicy& policy, double first, const OpTimes& first_ops,
                             Backend* be, const std::function<double()>& timed_again, double hint) {
    struct Run {
        double seconds;
        OpTimes ops;
    };
    std::vector<Run> runs{{first, first_ops}};
    double fastest = first;
    const double limit = policy.rerun_below_seconds;
    const bool hinted_short = hint >= 0 && hint < limit;
    const auto want = [&] {
        if (policy.runs <= 1) return 1;
        if (fastest < limit || hinted_short) return policy.runs;
        return hint < 0 ? 2 : 1;  // unknown: one more look before calling it long
    };
    // The median run (upper one of an even count) slowed past the ratio: most runs disturbed.
    const auto disturbed = [&] {
        std::vector<double> s;
        for (const Run& r : runs) s.push_back(r.seconds);
        std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
        return s[s.size() / 2] > policy.disturbed_ratio * fastest;
    };
    int target = 1;
    for (;;) {
        target = std::max(target, want());  // a long-looking first run may turn out short
        if (static_cast<int>(runs.size()) >= target) {
            if (target < policy.runs || target >= policy.max_runs || !disturbed()) break;
            target = std::min(target + 2, policy.max_runs);
            continue;
        }
        const double seconds = timed_again();
        runs.push_back({seconds, be ? be->op_times() : OpTimes{}});
        fastest = std::min(fastest, runs.back().seconds);
    }
    std::sort(runs.begin(), runs.end(),
              [](const Run& a, const Run& b) { return a.seconds < b.seconds; });
    const std::size_t n = runs.size();
    StepTiming t;
    t.runs = static_cast<int>(n);
    t.min = runs.front().seconds;
    t.max = runs.back().seconds;
    // An even count takes the mean of the middle two; the op times come from the lower one.
    t.median = n % 2 ? runs[n / 2].seconds : (runs[n / 2 - 1].seconds + runs[n / 2].seconds) / 2;
    t.op_times = runs[(n - 1) / 2].ops;
    return t;
}

}  // namespace kvs
