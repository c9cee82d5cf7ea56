#pragma once
// How `kvscope-cli bench` schedules its runs: the jobs of one length (a measurement in a variant)
// each get a Session (bench_runs.h) and run interleaved, round by round; a Cell holds one job's
// timed runs and summarizes them.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/bench_runs.h"
#include "cli/bench_stats.h"
#include "kernels/cpu/cpu_backend.h"

namespace kvs::cli {

// One (length, measure) cell: every repeat's sample.
struct Cell {
    int length = 0;
    Measure measure{};
    std::vector<RunSample> runs;

    std::vector<double> each(double (*f)(const RunSample&)) const {
        std::vector<double> v;
        for (const auto& r : runs) v.push_back(f(r));
        return v;
    }
    Spread rate() const {
        return spread(each([](const RunSample& r) { return r.tokens / r.seconds; }));
    }
    Spread seconds() const {
        return spread(each([](const RunSample& r) { return r.seconds; }));
    }
    Spread total() const {
        return spread(each([](const RunSample& r) { return r.total_s; }));
    }
    Spread first_token() const {
        return spread(each([](const RunSample& r) { return r.first_token_s; }));
    }
    Spread per_token() const {
        return spread(each([](const RunSample& r) { return r.seconds / r.tokens; }));
    }
    Spread gflops() const {
        return spread(each([](const RunSample& r) { return r.counts.flops / r.forward_s / 1e9; }));
    }
    Spread gbytes() const {
        return spread(each([](const RunSample& r) { return r.counts.bytes / r.forward_s / 1e9; }));
    }
    Spread op(int i) const {
        std::vector<double> v;
        for (const auto& r : runs) v.push_back(r.ops.seconds[i]);
        return spread(v);
    }
    const StepCounts& counts() const { return runs.front().counts; }  // the same every run
};

class Bench {
  public:
    // Throws kvs::Error when the prompt text encodes to no tokens.
    Bench(const Model& model, Backend& backend, std::string prompt_text, int repeats, int warmup);

    int decode_prompt_len() const { return static_cast<int>(decode_prompt_.size()); }
    const std::vector<int>& decode_prompt() const { return decode_prompt_; }
    bool fits(Measure m, int L) const {
        const int ctx = model_.config().seq_len;
        return is_prefill(m) ? L <= ctx : L >= 2 && decode_prompt_len() + L - 1 <= ctx;
    }

    // One measurement at one length, in one variant.
    struct Variant {
        bool trace = false;
        bool op_timers = true;       // the CPU backend's per-op clocks
        bool reference_ops = false;  // the CPU backend's plain run.c-order loops
    };
    struct Job {
        Measure measure;
        Variant variant;
    };

    // Warm-up runs, then the timed repeats, of every job at length L, interleaved: each round
    // runs every job once, so a change in the machine's load (other processes come and go) falls
    // on all of them alike rather than on whichever ran during it. One Session per job.
    std::vector<Cell> interleaved(int L, const std::vector<Job>& jobs);

    int repeats() const { return repeats_; }
    // Called before each run (warm-up runs included): the length, the measure, and the run's
    // number among the `total` of this call.
    using Progress = std::function<void(int L, Measure m, int run, int total)>;
    void set_progress(Progress p) { progress_ = std::move(p); }

  private:
    const Model& model_;
    std::unique_ptr<Model> no_stop_;
    Backend& backend_;
    std::string prompt_text_;
    std::vector<int> decode_prompt_;
    int repeats_, warmup_;
    CpuBackend* cpu_;  // null for other backends
    Progress progress_;
};

}  // namespace kvs::cli
