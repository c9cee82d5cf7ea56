#pragma once
// Step times a class can trust: one sample of a sub-millisecond step is at the mercy of whatever
// else the machine does (a single 4 ms outlier is enough to make the cached total look slower
// than the uncached one). So a short step is run several times from the same starting state and its
// time is the median of the runs; the spread (fastest..slowest) is kept beside it.
#include <functional>

#include "core/model/backend.h"

namespace kvs {

struct TimingPolicy {
    int runs = 3;                        // runs of a short step in all (1: measure it once)
    double rerun_below_seconds = 0.010;  // a step whose first run took longer is measured once
    // A median says what the step costs only when most runs were undisturbed. When the median
    // run is over `disturbed_ratio` times the fastest (half the runs or more were slowed by
    // something else on the machine), two more runs at a time are taken, up to `max_runs`.
    int max_runs = 9;
    double disturbed_ratio = 1.5;
};

struct StepTiming {
    double median = 0;        // seconds of the step's forward work: the median run
    double min = 0, max = 0;  // the fastest and the slowest run
    int runs = 1;
    OpTimes op_times;  // per-op times of the median run
};

// Called just before a timed run: gives the processor away once so the run starts on a fresh
// time slice of the scheduler. On a shared machine a sub-millisecond run that starts late in a
// slice is cut off and waits out other processes' slices, tens of milliseconds that are not
// the step's; one that starts on a fresh slice usually finishes inside it.
void before_timed_run();

// `first` / `first_ops`: the step's first run, already done and timed. `again` repeats the same
// forward work from the state before the step (the caller rewinds the cache inside it; the work
// is deterministic, so each run computes what the first did). A step is short, and run until
// `policy.runs` runs are in, when its fastest run so far or `hint` (the median of the previous
// step, -1 when there is none) is under `policy.rerun_below_seconds`; a short step whose median
// run is over `policy.disturbed_ratio` times its fastest gets two more runs at a time, up to
// `policy.max_runs`. A first run over it with
// no hint gets one more run, so that one outlier does not make a short step look long. `be` may
// be null (the toy): then no op times and no device synchronisation.
StepTiming retime_step(const TimingPolicy& policy, double first, const OpTimes& first_ops,
                       Backend* be, const std::function<void()>& again, double hint = -1);
// The same rule with the timing handed in: `timed_again` repeats the step and returns its
// seconds (retime_step's clock around `again`; a test's fixed seconds, so the rule is checked
// without depending on how busy the machine is). `be`, when given, gives each run's op times.
StepTiming retime_step_timed(const TimingPolicy& policy, double first, const OpTimes& first_ops,
                             Backend* be, const std::function<double()>& timed_again,
                             double hint = -1);

// Two steps that are the same work (compare mode's two prefills: the cache plays no part yet),
// timed in turn so that neither the order of measuring nor a cache warmed by the other favours
// one: `a` and `b` each run their step once more from its starting state and return its seconds;
// they are called b a, a b, b a, ... (`a` ran first before). `short_step`: policy.runs rounds
// (rounded up to even, at least 2), else 2. Each gets the median of its own runs; op times are
// left to the first timing.
struct InTurn {
    StepTiming a, b;
};
InTurn time_in_turn(const TimingPolicy& policy, bool short_step, const std::function<double()>& a,
                    const std::function<double()>& b);

}  // namespace kvs
