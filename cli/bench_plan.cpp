#include "cli/bench_plan.h"

#include "core/util/error.h"

namespace kvs::cli {
namespace {
constexpr double kRewarmBelow = 0.1;  // seconds: jobs this short are re-warmed before each run
}  // namespace

Bench::Bench(const Model& model, Backend& backend, std::string prompt_text, int repeats, int warmup)
    : model_(model),
      no_stop_(without_stop_tokens(model)),
      backend_(backend),
      prompt_text_(std::move(prompt_text)),
      repeats_(repeats),
      warmup_(warmup),
      cpu_(dynamic_cast<CpuBackend*>(&backend)) {
    decode_prompt_ = model.tokenizer().encode(prompt_text_);
    if (decode_prompt_.empty()) throw Error("the bench prompt encodes to no tokens");
}

std::vector<Cell> Bench::interleaved(int L, const std::vector<Job>& jobs) {
    std::vector<std::unique_ptr<MeasureRunner>> runners;
    std::vector<Cell> cells(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const Measure m = jobs[j].measure;
        RunSetup setup;
        setup.model = is_prefill(m) ? &model_ : no_stop_.get();
        setup.backend = &backend_;
        setup.prompt = is_prefill(m) ? prompt_of_length(model_, prompt_text_, L) : decode_prompt_;
        setup.length = L;
        setup.trace = jobs[j].variant.trace;
        runners.push_back(std::make_unique<MeasureRunner>(m, setup));
        cells[j].length = L;
        cells[j].measure = m;
    }
    const int total = (warmup_ + repeats_) * static_cast<int>(jobs.size());
    int done = 0;
    auto run = [&](std::size_t j) {
        if (progress_) progress_(L, jobs[j].measure, ++done, total);
        if (cpu_) {
            cpu_->set_time_ops(jobs[j].variant.op_timers);
            cpu_->set_reference_ops(jobs[j].variant.reference_ops);
        }
        RunSample sample = runners[j]->run();
        if (cpu_) {
            cpu_->set_time_ops(true);
            cpu_->set_reference_ops(false);
        }
        return sample;
    };
    for (int i = 0; i < warmup_; ++i)
        for (std::size_t j = 0; j < jobs.size(); ++j) run(j);
    for (int i = 0; i < repeats_; ++i)
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            // The other jobs' sessions have just used the caches; a short job is run once
            // untimed first so it is timed warm, as it would be when run on its own.
            if (i > 0 && cells[j].runs.back().total_s < kRewarmBelow) run(j);
            cells[j].runs.push_back(run(j));
        }
    return cells;
}

}  // namespace kvs::cli
