#include "core/session/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/model/kv_rows.h"
#include "core/model/step_graphs.h"
#include "core/model/token_by_token.h"
#include "core/util/error.h"

namespace kvs {
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}
// Largest |a - b| between the first n rows of two K/V blocks, per layer and K (side 0) or V
// (side 1): [n_layers * 2].
std::vector<double> row_deltas(ConstKvRows a, ConstKvRows b, int n) {
    std::vector<double> d(std::size_t(a.n_layers) * 2, 0.0);
    for (int l = 0; l < a.n_layers; ++l)
        for (int side : {ConstKvRows::K, ConstKvRows::V}) {
            const auto x = a.rows_of(l, side), y = b.rows_of(l, side);
            double& m = d[std::size_t(l) * 2 + side];
            for (std::size_t i = 0; i < std::size_t(n) * a.kv_dim; ++i)
                m = std::max(m, std::fabs(double(x[i]) - double(y[i])));
        }
    return d;
}

// The last `keep` rows of a K/V block, in its place.
void keep_last_kv_rows(std::vector<float>& kv, ConstKvRows in, int keep) {
    std::vector<float> out(ConstKvRows{nullptr, in.n_layers, keep, in.kv_dim}.size());
    const KvRows kept{out.data(), in.n_layers, keep, in.kv_dim};
    for (int l = 0; l < in.n_layers; ++l)
        for (int side : {KvRows::K, KvRows::V})
            std::copy_n(in.row(l, side, in.rows - keep).data(), std::size_t(keep) * in.kv_dim,
                        kept.rows_of(l, side).data());
    kv = std::move(out);
}
}  // namespace

Session::Session(const Model& model, Backend& backend, SessionConfig config)
    : model_(model),
      runner_(model.make_runner(backend)),
      config_(config),
      sampler_(config.sampler),
      trace_(config.trace_budget) {
    runner_->set_mask(config_.mask);
    set_mode(config_.mode);
}

void Session::set_sampler(const SamplerConfig& s) {
    config_.sampler = s;
    sampler_ = Sampler(s);
}

void Session::set_prompt(std::string_view text) {
    set_prompt_tokens(model_.tokenizer().encode(text));
}

void Session::set_prompt_tokens(std::vector<int> ids) {
    const int ctx = model_.config().seq_len;
    if (ids.empty()) throw Error("the prompt is empty");
    if (static_cast<int>(ids.size()) > ctx)
        throw Error("the prompt is " + std::to_string(ids.size()) +
                    " tokens, longer than the model's context of " + std::to_string(ctx) +
                    " tokens");
    for (int t : ids)
        if (t < 0 || t >= model_.config().vocab_size)
            throw Error("prompt token id " + std::to_string(t) + " is outside the vocabulary");
    const auto saved = std::move(tokens_);
    const int saved_len = prompt_len_;
    tokens_ = std::move(ids);
    prompt_len_ = static_cast<int>(tokens_.size());
    try {
        check_fits();
    } catch (...) {
        tokens_ = saved;
        prompt_len_ = saved_len;
        throw;
    }
    reset();
}

int Session::max_new_tokens_allowed() const {
    // Positions 0..P+N-2 are fed to the model (the last chosen token is never fed back).
    return model_.config().seq_len - prompt_len_ + 1;
}

void Session::check_fits() const {
    const int n = config_.max_new_tokens;
    if (n > max_new_tokens_allowed())
        throw Error("max new tokens " + std::to_string(n) + " does not fit: the prompt is " +
                    std::to_string(prompt_len_) + " tokens and the context " +
                    std::to_string(model_.config().seq_len) + ", so at most " +
                    std::to_string(max_new_tokens_allowed()) + " new tokens");
    if (n == 0) throw Error("max new tokens must be at least 1");
}

void Session::reset() {
    tokens_.resize(prompt_len_);
    runner_->reset();
    trace_.clear();
    // The prefill and every decode step this run may take.
    const int steps =
        config_.max_new_tokens > 0 ? config_.max_new_tokens : max_new_tokens_allowed();
    trace_.reserve(std::size_t(std::max(steps, 0)) + 1);
    sampler_.reseed();
    finish_reason_ = FinishReason::None;
    forced_next_ = -1;
}

const StepRecord& Session::step() {
    check_can_step();
    StepRecord r = new_record();
    Capture want = config_.capture;
    // Uncached decode: the rows the cache holds before the step, to compare with their
    // recomputation (read outside the timed region: the comparison is the trace's, not the model's
    // work).
    const KvCheck check = hold_cached_rows(want);
    const TimedRun run = start_timed_run(want);
    if (!prefilled())
        prefill(r, want);
    else
        decode(r, want, check);
    time_forward(r, want, run);
    const Draw d = choose_token(r);
    if (check.on) compare_recomputed_rows(r, check);
    finish_step(r, fr_);
    tokens_.push_back(d.token);
    const auto& stops = model_.stop_tokens();
    finish_reason_ = stop_rule(
        config_.stop_at_end_token && std::find(stops.begin(), stops.end(), d.token) != stops.end(),
        static_cast<int>(tokens_.size()), model_.config().seq_len, generated(),
        config_.max_new_tokens);
    trace_.push(std::move(r));
    return trace_.back();
}

// The prefill: every prompt token in one forward pass, each row seeing the rows before it (the
// causal mask), or one pass a token stitched into one pass's shapes; each token's K and V rows are
// appended to the cache, and the last row's logits choose the first new token.
void Session::prefill(StepRecord& r, const Capture& want) {
    r.phase = Phase::Prefill;
    r.new_tokens = tokens_;
    r.pos0 = 0;
    r.tokens_processed = prompt_len_;
    if (config_.prefill_token_by_token) {
        r.counts = forward_token_by_token(*runner_, model_, tokens_, want, fr_);
        r.forward_calls = prompt_len_;
    } else {
        runner_->forward(tokens_, want, fr_);
        r.counts = model_.count_forward(0, prompt_len_);
        r.forward_calls = 1;
    }
    r.query_rows_used = r.kv_rows_written = prompt_len_;
    count_rows(r);
}

// A decode step: the last chosen token in. Cached: one query row against the cached keys and
// values, one K/V row appended. Uncached: no reuse, the cache is emptied and every token so far
// goes through the model again (the same logits, more work).
void Session::decode(StepRecord& r, Capture& want, const KvCheck& check) {
    r.phase = Phase::Decode;
    r.new_tokens = {tokens_.back()};
    r.forward_calls = 1;
    if (config_.mode == CacheMode::Cached) {
        r.pos0 = runner_->kv().len;
        r.tokens_processed = 1;
        runner_->forward(std::span<const int>(&tokens_.back(), 1), want, fr_);
        r.counts = model_.count_forward(r.pos0, 1);
        r.kv_rows_written = 1;
    } else {
        runner_->reset();
        r.pos0 = 0;
        r.tokens_processed = static_cast<int>(tokens_.size());
        // Bidirectional: every row changed, so every row is kept; causal: the new one, or every
        // row computed where the views open them all.
        want.last_rows =
            r.mask == AttentionMask::Bidirectional || config_.keep_every_query_row ? -1 : 1;
        want.all_kv_rows = check.on;
        runner_->forward(tokens_, want, fr_);
        r.counts = model_.count_forward(0, r.tokens_processed);
        r.kv_rows_written = r.tokens_processed;
        r.kv_rows_recomputed = check.rows;
    }
    r.query_rows_used = 1;
    count_rows(r);
}

// Rows computed, and without the mask the pairs each row also scores with the keys after it.
void Session::count_rows(StepRecord& r) const {
    r.query_rows_computed = r.tokens_processed;
    if (r.mask == AttentionMask::Bidirectional)
        r.counts += count_unmasked_pairs(model_.config(), r.tokens_processed);
}

void Session::check_can_step() const {
    if (prompt_len_ == 0) throw Error("no prompt set");
    if (finished())
        throw Error(finish_reason_ == FinishReason::ContextFull
                        ? "generation has finished: the model's context of " +
                              std::to_string(model_.config().seq_len) + " tokens is full"
                        : std::string("generation has finished (") +
                              finish_reason_name(finish_reason_) + ")");
}

StepRecord Session::new_record() const {
    StepRecord r;
    r.index = static_cast<int>(trace_.steps().size());
    r.mode = config_.mode;
    r.mask = config_.mask;
    r.backend = runner_->backend_name();
    r.device = runner_->device();
    return r;
}

Session::KvCheck Session::hold_cached_rows(const Capture& want) {
    KvCheck check;
    check.rows = prefilled() ? runner_->kv().len : 0;
    check.on = prefilled() && config_.mode == CacheMode::Uncached && want.kv_rows;
    if (check.on) runner_->read_kv_rows(0, check.rows, check.held);
    return check;
}

Session::TimedRun Session::start_timed_run(const Capture& want) {
    Backend* be = runner_->backend();
    if (be) {
        be->set_record_calls(want.op_log);
        be->reset_op_times();
    }
    TimedRun run;
    run.kernels0 = be ? be->kernel_launches() : 0;
    before_timed_run();
    run.t0 = Clock::now();
    return run;
}

void Session::time_forward(StepRecord& r, const Capture& want, const TimedRun& run) {
    Backend* be = runner_->backend();
    if (be) be->synchronize();
    r.forward_seconds = seconds_since(run.t0);
    r.path = fr_.path;
    if (be) {
        r.kernel_launches = static_cast<int>(be->kernel_launches() - run.kernels0);
        r.op_timing = be->op_timing();
    }
    const OpTimes first_ops = be ? be->op_times() : OpTimes{};
    // The first run's op calls, before the timing re-runs reset the backend's counters.
    if (be && !fr_.ops.ops.empty()) fr_.ops.resolve(be->op_calls());
    // The same forward work again from the same state (the cache cut back to its length before
    // the step), so the time is a median of runs, not one sample (core/session/step_timing.h).
    const StepTiming tm = retime_step(
        config_.timing, r.forward_seconds, first_ops, be,
        [&] {
            if (r.phase == Phase::Decode && config_.mode == CacheMode::Cached) {
                runner_->truncate(r.pos0);
                runner_->forward(std::span<const int>(&tokens_.back(), 1), want, rerun_);
            } else if (r.phase == Phase::Prefill && config_.prefill_token_by_token) {
                runner_->reset();
                for (int p = 0; p < prompt_len_; ++p)
                    runner_->forward(std::span<const int>(&tokens_[p], 1), want, rerun_);
            } else {  // prefill, or an uncached decode: the whole sequence from an empty cache
                runner_->reset();
                runner_->forward(tokens_, want, rerun_);
            }
        },
        trace_.empty() ? -1.0 : trace_.back().forward_seconds);
    r.forward_seconds = tm.median;
    r.forward_min_seconds = tm.min;
    r.forward_max_seconds = tm.max;
    r.timing_runs = tm.runs;
    r.op_times = tm.op_times;
    // A cached decode step on a backend with fast paths: the figures of the one that ran, or,
    // after a step timed op by op, each fast path measured beside it.
    if (be && r.phase == Phase::Decode && config_.mode == CacheMode::Cached) {
        if (r.path == PassPath::Graph) {
            r.graph_seconds = r.forward_seconds;
            r.graph_kernel_launches = r.kernel_launches;
        } else if (r.path == PassPath::Fused) {
            r.fused_seconds = r.forward_seconds;
            r.fused_kernel_launches = r.kernel_launches;
        } else {
            if (runner_->records_graphs())
                time_fast_path(r, want, false, r.graph_seconds, r.graph_kernel_launches);
            if (runner_->runs_fused())
                time_fast_path(r, want, true, r.fused_seconds, r.fused_kernel_launches);
        }
    }
}

Draw Session::choose_token(StepRecord& r) {
    const auto t_sample = Clock::now();
    Draw d = sampler_.sample(fr_.logits);
    const float coin = d.coin;
    const bool forced = forced_next_ >= 0;
    if (forced) {
        d.token = forced_next_;
        d.coin = -1;
        forced_next_ = -1;
    }
    const double sample_seconds = seconds_since(t_sample);
    r.wall_seconds = r.forward_seconds + sample_seconds;
    if (runner_->backend() && !fr_.ops.ops.empty())
        fr_.ops.add_host(OpKind::Sampling, model_.config(), 1, sample_seconds);
    r.token_out = d.token;
    r.coin = d.coin;
    // The stages of the distribution the draw indexed, shaped again outside the timed region by
    // the sampler's own function: the same numbers, and the draw's coin lands on the same token.
    r.sampling = sampling_stages(fr_.logits, sampler_.config(), coin, config_.sampling_entries);
    r.sampling.forced = forced;
    return d;
}

void Session::compare_recomputed_rows(StepRecord& r, const KvCheck& check) {
    // fr_.kv_rows holds every row the pass wrote; the trace keeps the new one, as cached.
    const ModelConfig& mc = model_.config();
    const int L = mc.n_layers, kv = mc.kv_dim();
    const ConstKvRows wrote{fr_.kv_rows.data(), L, fr_.kv_rows_kept, kv};
    const auto d_ls = row_deltas(wrote, {check.held.data(), L, check.rows, kv}, check.rows);
    r.kv_recomputed_max_delta = *std::max_element(d_ls.begin(), d_ls.end());
    for (int l = 0; l < L; ++l) {
        r.kv_delta_k.push_back(d_ls[2 * l]);
        r.kv_delta_v.push_back(d_ls[2 * l + 1]);
    }
    // The trace keeps the new row, as cached; bidirectional, every row (each one changed).
    if (r.mask != AttentionMask::Bidirectional) {
        keep_last_kv_rows(fr_.kv_rows, wrote, 1);
        fr_.kv_rows_kept = 1;
    }
}

double Session::rerun_prefill() {
    if (trace_.steps().size() != 1) throw Error("only the prefill, before any decode step, reruns");
    Backend* be = runner_->backend();
    const Capture& want = config_.capture;
    if (be) be->set_record_calls(false);  // the step's op log stays the first run's
    const auto t0 = Clock::now();
    if (config_.prefill_token_by_token) {
        runner_->reset();
        for (int p = 0; p < prompt_len_; ++p)
            runner_->forward(std::span<const int>(&tokens_[p], 1), want, rerun_);
    } else {
        runner_->reset();
        runner_->forward(std::span<const int>(tokens_.data(), prompt_len_), want, rerun_);
    }
    if (be) be->synchronize();
    return seconds_since(t0);
}

void Session::retime_prefill(const StepTiming& t) {
    StepRecord& r = trace_.back_for_timing();
    const double sampling = r.wall_seconds - r.forward_seconds;
    r.forward_seconds = t.median;
    r.forward_min_seconds = t.min;
    r.forward_max_seconds = t.max;
    r.timing_runs = t.runs;
    r.wall_seconds = t.median + sampling;
    r.timed_in_turn = true;
}

void Session::time_fast_path(const StepRecord& r, const Capture& want, bool fused, double& seconds,
                             int& kernels) {
    Backend* be = runner_->backend();
    Capture fast = want;
    fast.op_log = false;  // per-op timing off: the fused kernels, or the graph of the others
    fast.fused = fused;
    const auto again = [&] {
        runner_->truncate(r.pos0);
        runner_->forward(std::span<const int>(&tokens_.back(), 1), fast, rerun_);
    };
    be->reset_op_times();
    const std::uint64_t k0 = be->kernel_launches();
    before_timed_run();
    const auto t0 = Clock::now();
    again();
    be->synchronize();
    const double first = seconds_since(t0);
    kernels = static_cast<int>(be->kernel_launches() - k0);
    seconds = retime_step(config_.timing, first, OpTimes{}, be, again, r.forward_seconds).median;
}

void Session::finish_step(StepRecord& r, const ForwardResult& fr) {
    // Top-k of the next-token distribution at temperature 1, for the views.
    std::vector<float> probs(fr.logits.size());
    softmax(fr.logits, probs);
    // The k best, best first, equal probabilities by token id: one pass that keeps them sorted
    // and inserts the few that beat the k-th (a partial sort of every id took longer).
    const int k = std::min<int>(config_.top_k_record, static_cast<int>(probs.size()));
    const auto better = [&](int a, int b) {
        return probs[a] != probs[b] ? probs[a] > probs[b] : a < b;
    };
    std::vector<int> best;
    best.reserve(k + 1);
    for (int i = 0; i < static_cast<int>(probs.size()) && k > 0; ++i) {
        if (static_cast<int>(best.size()) == k && !better(i, best.back())) continue;
        best.insert(std::upper_bound(best.begin(), best.end(), i, better), i);
        if (static_cast<int>(best.size()) > k) best.pop_back();
    }
    r.top.reserve(best.size());
    for (int i : best) r.top.push_back({i, probs[i], fr.logits[i]});
    if (config_.keep_logits) r.logits = fr.logits;
    if (config_.capture.attention) r.attention = fr.attention;
    r.kv_rows_kept = fr.kv_rows_kept;
    if (config_.capture.kv_rows) r.kv_rows = fr.kv_rows;
    r.head_outputs = fr.head_outputs;
    r.ops = fr.ops;
    if (config_.capture.vectors) {
        r.q_rows = fr.q_rows;
        r.attn_out = fr.attn_out;
    }
    if (config_.capture.projections) r.projections = fr.projections;
    r.kv = runner_->kv();
}

std::string Session::text(bool printable_only) const {
    const Tokenizer& tok = model_.tokenizer();
    const auto& stops = model_.stop_tokens();
    std::string s;
    // Like run.c: from the first token after BOS, each piece decoded against its predecessor.
    const int first = tok.bos() >= 0 && !tokens_.empty() && tokens_[0] == tok.bos() ? 1 : 0;
    for (std::size_t i = first; i < tokens_.size(); ++i) {
        if (i >= static_cast<std::size_t>(prompt_len_) &&
            std::find(stops.begin(), stops.end(), tokens_[i]) != stops.end()) {
            if (config_.stop_at_end_token) break;
            continue;  // generating past it: the end token itself is not text
        }
        const int prev = i > 0 ? tokens_[i - 1] : -1;
        s += printable_only ? tok.printable(prev, tokens_[i]) : tok.decode(prev, tokens_[i]);
    }
    return s;
}

}  // namespace kvs
