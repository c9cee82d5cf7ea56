// Step times a class can trust: a short step is run several times from the
// same state and timed by the median; the re-runs change nothing the step computed.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "core/loaders/model_loader.h"
#include "core/model/toy_model.h"
#include "core/session/session.h"
#include "core/session/step_timing.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

TEST_CASE("retime_step: the median of the runs, a long step measured once", "[timing]") {
    int calls = 0;
    TimingPolicy p;  // 3 runs below 10 ms
    p.max_runs = 3;  // no extra runs for disturbed medians here: the next test case checks them
    // 50 ms after a previous step of 60 ms: a long step, measured once.
    StepTiming t = retime_step(
        p, 0.050, {}, nullptr, [&] { ++calls; }, 0.060);
    CHECK(calls == 0);
    CHECK(t.runs == 1);
    CHECK(t.median == 0.050);

    // A first run of 50 ms with nothing to compare it with gets a second look; the re-runs are
    // quick, so it was an outlier of a short step: three runs, and the median is a quick one.
    t = retime_step(p, 0.050, {}, nullptr, [&] { ++calls; });
    CHECK(calls == 2);
    CHECK(t.runs == 3);
    CHECK(t.median < 0.010);

    // 50 ms after a quick previous step: short, so re-run.
    calls = 0;
    t = retime_step(
        p, 0.050, {}, nullptr, [&] { ++calls; }, 0.001);
    CHECK(calls == 2);
    CHECK(t.runs == 3);
    CHECK(t.max == 0.050);
    CHECK(t.median < 0.010);  // the outlier is not the median
    CHECK(t.min <= t.median);

    p.runs = p.max_runs = 4;  // an even count: the mean of the middle two
    calls = 0;
    t = retime_step_timed(p, 0.0, {}, nullptr, [&] { return ++calls == 3 ? 0.030 : 0.002; });
    CHECK(t.runs == 4);
    CHECK(t.min == 0.0);
    CHECK(t.max == 0.030);
    CHECK(t.median == 0.002);  // runs 0, 2, 2, 30 ms
}

TEST_CASE("retime_step times each re-run of the step with the clock", "[timing]") {
    TimingPolicy p;
    p.max_runs = 3;
    int calls = 0;
    const StepTiming t = retime_step(p, 0.050, {}, nullptr, [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    });
    CHECK(calls == 2);
    CHECK(t.runs == 3);
    // A sleep lasts at least what it asks; how much longer depends on the machine's load, so
    // nothing here bounds a measured time from above.
    CHECK(t.max >= 0.050);
    CHECK(t.min >= 0.002);
    CHECK(t.median >= 0.002);
}

TEST_CASE("retime_step: a median slowed by the machine gets more runs, up to a bound", "[timing]") {
    TimingPolicy p;  // 3 runs below 10 ms, up to 9 when the median run is over 1.5x the fastest
    // Runs 2 and 3 disturbed (30 ms against a 2 ms step), the rest not: the median of three
    // would be a disturbed run; two more runs, and the median of five is an undisturbed one.
    int calls = 0;
    const std::vector<double> seconds = {0.030, 0.030, 0.002, 0.002, 0.002, 0.002, 0.002, 0.002};
    StepTiming t = retime_step_timed(p, 0.002, {}, nullptr, [&] { return seconds.at(calls++); });
    CHECK(t.runs == 5);
    CHECK(calls == 4);
    CHECK(t.median == 0.002);
    CHECK(t.max == 0.030);

    // Every re-run disturbed: stops at max_runs, and says so by the spread it keeps.
    calls = 0;
    t = retime_step_timed(p, 0.001, {}, nullptr, [&] { return ++calls, 0.005; });
    CHECK(t.runs == 9);
    CHECK(calls == 8);
    CHECK(t.min == 0.001);
    CHECK(t.median == 0.005);

    // Undisturbed runs: three, as before.
    calls = 0;
    t = retime_step_timed(p, 0.008, {}, nullptr, [&] { return ++calls, 0.008; });
    CHECK(t.runs == 3);
    CHECK(calls == 2);
}

namespace {

// Every step of a session driven to its end, with `runs` timing runs per step.
std::vector<StepRecord> drive(const Model& m, CacheMode mode, int runs, bool by_token = false) {
    CpuBackend be;
    SessionConfig cfg;
    cfg.mode = mode;
    cfg.max_new_tokens = 6;
    cfg.prefill_token_by_token = by_token;
    cfg.timing.runs = cfg.timing.max_runs = runs;
    cfg.timing.rerun_below_seconds = 10.0;  // every step re-run, however slow the machine
    Session s(m, be, cfg);
    s.set_prompt(m.is_toy() ? "Today weather is so" : "the cat");
    std::vector<StepRecord> out;
    while (!s.finished()) out.push_back(s.step());
    return out;
}

}  // namespace

TEST_CASE("re-running a step for its time changes nothing it computed", "[timing]") {
    const auto tiny = test::open_tiny_model("timing");
    ToyModel toy;
    for (const Model* m : {static_cast<const Model*>(tiny.get()), static_cast<const Model*>(&toy)})
        for (const CacheMode mode : {CacheMode::Cached, CacheMode::Uncached})
            for (const bool by_token : {false, true}) {
                INFO(m->name() << " " << mode_name(mode) << (by_token ? " by token" : ""));
                const auto once = drive(*m, mode, 1, by_token);
                const auto thrice = drive(*m, mode, 3, by_token);
                REQUIRE(once.size() == thrice.size());
                for (std::size_t i = 0; i < once.size(); ++i) {
                    const StepRecord &a = once[i], &b = thrice[i];
                    CHECK(a.timing_runs == 1);
                    CHECK(b.timing_runs == 3);
                    CHECK(b.forward_min_seconds <= b.forward_seconds);
                    CHECK(b.forward_seconds <= b.forward_max_seconds);
                    CHECK(b.token_out == a.token_out);
                    CHECK(b.logits == a.logits);
                    CHECK(b.kv.len == a.kv.len);
                    CHECK(b.kv_rows == a.kv_rows);
                    CHECK(b.attention.p == a.attention.p);
                    CHECK(b.counts.flops == a.counts.flops);
                    CHECK(b.forward_calls == a.forward_calls);
                }
            }
}

TEST_CASE("time_in_turn: two equal steps measured alternately, each by its own median",
          "[timing]") {
    // The runs return made-up seconds (no clock is read): the order of the calls and which run
    // each median takes are what is checked.
    std::string order;
    double a_next = 0.001, b_next = 0.010;
    auto a = [&] {
        order += 'a';
        return a_next += 0.001;
    };
    auto b = [&] {
        order += 'b';
        return b_next += 0.001;
    };
    TimingPolicy p;  // 3 runs: rounded up to 4, two rounds each way
    const InTurn t = time_in_turn(p, true, a, b);
    // `a` ran first before: b starts, then they take turns leading.
    CHECK(order == "baabbaab");
    CHECK(t.a.runs == 4);
    CHECK(t.b.runs == 4);
    CHECK(t.a.median == Approx((0.003 + 0.004) / 2));
    CHECK(t.a.min == Approx(0.002));
    CHECK(t.b.max == Approx(0.014));
    // A long step: one round each way.
    order.clear();
    const InTurn l = time_in_turn(p, false, a, b);
    CHECK(order == "baab");
    CHECK(l.a.runs == 2);
}
