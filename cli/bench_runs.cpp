#include "cli/bench_runs.h"

#include <chrono>

#include "core/session/session.h"
#include "core/util/error.h"

namespace kvs::cli {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

class NoStopModel final : public Model {
  public:
    explicit NoStopModel(const Model& m) : model_(m) {}
    std::string name() const override { return model_.name(); }
    const ModelConfig& config() const override { return model_.config(); }
    const Tokenizer& tokenizer() const override { return model_.tokenizer(); }
    std::unique_ptr<Runner> make_runner(Backend& b) const override { return model_.make_runner(b); }
    std::unique_ptr<BatchRunner> make_batch_runner(Backend& b, int max_batch) const override {
        return model_.make_batch_runner(b, max_batch);
    }
    std::vector<int> stop_tokens() const override { return {}; }
    StepCounts count_forward(int pos0, int T) const override {
        return model_.count_forward(pos0, T);
    }
    std::size_t parameter_count() const override { return model_.parameter_count(); }
    bool is_toy() const override { return model_.is_toy(); }

  private:
    const Model& model_;
};

void add_ops(OpTimes& sum, const OpTimes& t) {
    for (int i = 0; i < kOpCount; ++i) {
        sum.seconds[i] += t.seconds[i];
        sum.calls[i] += t.calls[i];
    }
}

}  // namespace

const char* measure_name(Measure m) {
    switch (m) {
        case Measure::PrefillBatched:
            return "prefill_batched";
        case Measure::PrefillByToken:
            return "prefill_token_by_token";
        case Measure::DecodeCached:
            return "decode_cached";
        case Measure::DecodeUncached:
            return "decode_uncached";
    }
    return "?";
}

bool is_prefill(Measure m) {
    return m == Measure::PrefillBatched || m == Measure::PrefillByToken;
}

std::unique_ptr<Model> without_stop_tokens(const Model& m) {
    return std::make_unique<NoStopModel>(m);
}

std::vector<int> prompt_of_length(const Model& m, const std::string& text, int length) {
    if (length > m.config().seq_len)
        throw Error("a prompt of " + std::to_string(length) +
                    " tokens does not fit the context of " + std::to_string(m.config().seq_len));
    const std::vector<int> ids = m.tokenizer().encode(text);
    const int bos = m.tokenizer().bos();
    const bool has_bos = bos >= 0 && !ids.empty() && ids[0] == bos;
    const std::vector<int> body(ids.begin() + (has_bos ? 1 : 0), ids.end());
    std::vector<int> out;
    if (has_bos) out.push_back(bos);
    if (body.empty() && length > static_cast<int>(out.size()))
        throw Error("the prompt text gives no tokens to repeat");
    for (std::size_t i = 0; static_cast<int>(out.size()) < length; ++i)
        out.push_back(body[i % body.size()]);
    out.resize(length);
    return out;
}

MeasureRunner::MeasureRunner(Measure m, const RunSetup& setup) : measure_(m) {
    SessionConfig cfg;
    // Tracing off keeps no payload: copying q and the attention output of every row out of the
    // pass costs 9.4 MB for a 128-token prefill of the 85M model (the 'transfer' column's 8.6 ms in
    // docs/bench/bench-85m-transfer-2cpu.txt). The op strip stays: the per-op table is read from
    // it.
    cfg.capture.attention = setup.trace;
    cfg.capture.kv_rows = setup.trace;
    cfg.capture.vectors = setup.trace;
    cfg.capture.projections = setup.trace;
    cfg.keep_logits = setup.trace;
    cfg.mode = m == Measure::DecodeUncached ? CacheMode::Uncached : CacheMode::Cached;
    cfg.prefill_token_by_token = m == Measure::PrefillByToken;
    cfg.timing.runs = 1;  // bench repeats whole runs itself and times them with its own clock
    cfg.max_new_tokens = is_prefill(m) ? 1 : setup.length;
    if (!is_prefill(m) && setup.length < 2)
        throw Error("decode lengths must be at least 2 (one token from the prefill, one decoded)");
    session_ = std::make_unique<Session>(*setup.model, *setup.backend, cfg);
    session_->set_prompt_tokens(setup.prompt);
}

MeasureRunner::~MeasureRunner() = default;

RunSample MeasureRunner::run() {
    Session& s = *session_;
    s.reset();
    RunSample out;
    const auto t0 = Clock::now();
    const StepRecord& pre = s.step();
    out.first_token_s = seconds_since(t0);
    if (is_prefill(measure_)) {
        out.tokens = s.prompt_len();
        out.seconds = out.first_token_s;
        out.forward_s = pre.forward_seconds;
        out.counts = pre.counts;
        out.ops = pre.op_times;
        out.total_s = out.first_token_s;
        return out;
    }
    // The decode loop, timed as a whole: forward passes, sampling and the trace's bookkeeping.
    const auto t1 = Clock::now();
    while (!s.finished()) s.step();
    out.seconds = seconds_since(t1);
    out.total_s = seconds_since(t0);
    for (const StepRecord& r : s.trace().steps()) {
        if (r.phase != Phase::Decode) continue;
        ++out.tokens;
        out.forward_s += r.forward_seconds;
        out.counts += r.counts;
        add_ops(out.ops, r.op_times);
    }
    out.text = s.text(true);
    return out;
}

}  // namespace kvs::cli
