#include "core/session/workbench.h"

#include <algorithm>
#include <limits>

#include "core/session/logit_difference.h"
#include "core/util/error.h"

namespace kvs {

Workbench::Workbench(Backend& backend, SessionConfig base)
    : Workbench([&backend](std::size_t) -> Backend& { return backend; }, std::move(base)) {}

Workbench::Workbench(BackendFor backend_for, SessionConfig base)
    : backend_for_(std::move(backend_for)), base_(std::move(base)) {}

Workbench::~Workbench() {
    sessions_.clear();  // before the model they refer to
}

std::unique_ptr<Session> Workbench::make_session(std::size_t i, CacheMode mode,
                                                 AttentionMask mask) const {
    SessionConfig cfg = base_;
    cfg.mode = mode;
    cfg.mask = mask;
    return std::make_unique<Session>(*model_, backend_for_(i), cfg);
}

std::vector<std::unique_ptr<Session>> Workbench::build_for(CacheView v) const {
    std::vector<std::unique_ptr<Session>> out;
    const auto modes = modes_for(v);
    const auto masks = masks_for(v);
    for (std::size_t i = 0; i < modes.size(); ++i) {
        out.push_back(make_session(i, modes[i], masks[i]));
        if (!prompt_.empty()) out.back()->set_prompt(prompt_);
    }
    return out;
}

void Workbench::drop_sessions() {
    sessions_.clear();
    diffs_.clear();
}

std::string Workbench::open(std::shared_ptr<const Model> m, const std::string& prompt) {
    drop_sessions();
    model_ = std::move(m);
    prompt_ = prompt;
    return rebuild();
}

std::string Workbench::rebuild() {
    drop_sessions();
    std::string why;
    if (model_) {
        try {
            sessions_ = build();
        } catch (const Error& e) {
            // E.g. a model whose context is shorter than the prompt: the sessions still get an
            // (empty) prompt, BOS alone where the model has one, so prefill and step still work.
            why = e.what();
            prompt_.clear();
            sessions_ = build();
            for (auto& s : sessions_) try {
                    s->set_prompt("");
                } catch (const Error&) {
                }
        }
    }
    notify(true);
    return why;
}

void Workbench::set_prompt(const std::string& text) {
    // Session::set_prompt changes nothing when it refuses, and every session has the same model
    // and limit: the first refusal leaves them all as they were.
    for (auto& s : sessions_) s->set_prompt(text);
    prompt_ = text;
    diffs_.clear();
    notify(true);
}

void Workbench::set_limit(int max_new_tokens) {
    if (max_new_tokens == base_.max_new_tokens) return;
    const int saved = base_.max_new_tokens;
    base_.max_new_tokens = max_new_tokens;
    if (sessions_.empty()) return;
    try {
        auto fresh = build();  // the old sessions stay until the new ones are whole
        sessions_ = std::move(fresh);
    } catch (...) {
        base_.max_new_tokens = saved;
        throw;
    }
    diffs_.clear();
    notify(true);
}

void Workbench::remake_and_replay(CacheView v) {
    const std::size_t target = sessions_.empty() ? 0 : sessions_[0]->trace().steps().size();
    auto fresh = build_for(v);  // the old sessions stay until the new ones are whole
    view_ = v;
    sessions_ = std::move(fresh);
    diffs_.clear();
    notify(true);
    for (std::size_t k = 0; k < target && !finished(); ++k) {
        if (hooks_.go_on && !hooks_.go_on()) break;
        step();
    }
}

void Workbench::set_view(CacheView v) {
    if (v == view_) return;
    // Into or out of the bidirectional pair: different sessions, made anew.
    if ((v == CacheView::Bidirectional || view_ == CacheView::Bidirectional) &&
        !sessions_.empty()) {
        remake_and_replay(v);
        return;
    }
    if (v != CacheView::Compare || sessions_.empty()) {
        view_ = v;
        if (sessions_.size() > 1) sessions_.resize(1);  // leaving compare: the twin goes
        diffs_.clear();
        if (!sessions_.empty())
            sessions_[0]->set_mode(v == CacheView::Off ? CacheMode::Uncached : CacheMode::Cached);
        notify(false);
        return;
    }
    // Into compare: the first session goes on with the cache; an uncached twin on the same
    // prompt replays the steps taken so far.
    Session& s0 = *sessions_[0];
    auto twin = make_session(1, CacheMode::Uncached);
    if (s0.prompt_len() > 0)
        twin->set_prompt_tokens(
            std::vector<int>(s0.tokens().begin(), s0.tokens().begin() + s0.prompt_len()));
    view_ = v;
    s0.set_mode(CacheMode::Cached);
    sessions_.push_back(std::move(twin));
    diffs_.clear();
    notify(false);
    Session& s1 = *sessions_[1];
    const std::size_t target = s0.trace().steps().size();
    for (std::size_t k = 0; k < target && !s1.finished(); ++k) {
        if (hooks_.go_on && !hooks_.go_on()) break;
        s1.step();
        record_difference();
        stepped(1);
    }
}

void Workbench::set_sampler(const SamplerConfig& s) {
    base_.sampler = s;
    for (auto& x : sessions_) x->set_sampler(s);
    notify(false);
}

void Workbench::set_timing(const TimingPolicy& t) {
    base_.timing = t;
    for (auto& x : sessions_) x->set_timing(t);
}

void Workbench::set_time_each_op(bool on) {
    base_.capture.time_each_op = on;
    for (auto& x : sessions_) x->set_time_each_op(on);
}

void Workbench::set_trace_budget(std::size_t bytes) {
    base_.trace_budget = bytes;
}

void Workbench::reset() {
    for (auto& s : sessions_) s->reset();
    diffs_.clear();
    notify(true);
}

bool Workbench::finished() const {
    return std::all_of(sessions_.begin(), sessions_.end(),
                       [](const auto& s) { return s->finished(); });
}

void Workbench::step() {
    if (sessions_.empty()) throw Error("no model is open");
    // Compare mode's two prefills are the same work: both run, then are timed in turn, before
    // anyone is told of either, so every view shows the times taken alike.
    if (view_ == CacheView::Compare && sessions_.size() == 2 && !sessions_[0]->prefilled() &&
        !sessions_[1]->prefilled()) {
        Session &a = *sessions_[0], &b = *sessions_[1];
        a.step();
        b.step();
        const double first =
            std::min(a.trace().back().forward_seconds, b.trace().back().forward_seconds);
        const InTurn t = time_in_turn(
            base_.timing, first < base_.timing.rerun_below_seconds,
            [&] { return a.rerun_prefill(); }, [&] { return b.rerun_prefill(); });
        a.retime_prefill(t.a);
        b.retime_prefill(t.b);
        record_difference();
        stepped(0);
        stepped(1);
        return;
    }
    for (std::size_t i = 0; i < sessions_.size(); ++i) {
        Session& s = *sessions_[i];
        if (s.finished()) continue;
        // The bidirectional session attends over the causal one's tokens (its own choices,
        // from a model trained causal, would make the two sequences differ).
        if (i == 1 && view_ == CacheView::Bidirectional && !sessions_[0]->trace().empty())
            s.force_next(sessions_[0]->trace().back().token_out);
        s.step();
        if (i == 1) record_difference();
        stepped(i);
    }
}

const StepRecord* Workbench::step_with_payload(std::size_t session, std::size_t k) const {
    const auto& steps = sessions_[session]->trace().steps();
    if (k < steps.size() && !steps[k].logits.empty()) return &steps[k];
    return hooks_.kept_step ? hooks_.kept_step(session, k) : nullptr;
}

void Workbench::record_difference() {
    const std::size_t n =
        std::min(sessions_[0]->trace().steps().size(), sessions_[1]->trace().steps().size());
    if (n == 0) return;
    diffs_.resize(n, std::numeric_limits<double>::quiet_NaN());
    const StepRecord* a = step_with_payload(0, n - 1);
    const StepRecord* b = step_with_payload(1, n - 1);
    if (a && b) diffs_[n - 1] = max_logit_difference(*a, *b);
}

}  // namespace kvs
