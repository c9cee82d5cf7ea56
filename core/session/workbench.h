#pragma once
// The bench a class watches: one model on a backend, a prompt, a generation limit and a cache
// view (core/session/cache_view.h), running one Session (cache on, or off) or two side by side
// (compare: the same prompt and sampler with the cache and without, stepped together). It keeps the
// cached-versus-uncached comparison: max |logit difference| per step
// (core/session/logit_difference.h). The CLI's compare, the lessons' target
// (lessonlib/session_lesson_target.h) and the window's engine worker (gui/engine_worker.h, on its
// data thread) each drive one.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/session/cache_view.h"
#include "core/session/session.h"

namespace kvs {

class Workbench {
  public:
    // Session i runs on backend_for(i): the window gives each session its own backend; the CLI
    // and the lessons one for all. A reference must stay valid while that session lives.
    using BackendFor = std::function<Backend&(std::size_t session)>;
    // Told to whoever shows the sessions (the window's snapshot); called on the stepping thread.
    struct Hooks {
        // The sessions or their settings changed (not a step); new_generation: every trace
        // starts over (model, prompt, limit, reset), else they go on (sampler, cache on/off).
        std::function<void(bool new_generation)> changed;
        // Session i has taken a step (in compare mode the twin's step comes second; the step's
        // logit difference is recorded before the twin's call).
        std::function<void(std::size_t session)> stepped;
        // Step k of session i where a copy with its payload is kept elsewhere (the window's
        // snapshot keeps every step while the sessions keep only the newest), else null. Read
        // when compare mode starts mid-run and the twin catches up.
        std::function<const StepRecord*(std::size_t session, std::size_t step)> kept_step;
        // Asked before each step of that catch-up: false stops it there (the window's cancel).
        std::function<bool()> go_on;
    };

    // `base`: what every session starts from (capture, timing, sampler, limit, trace budget);
    // its mode is set per session by the cache view.
    explicit Workbench(Backend& backend, SessionConfig base = {});
    explicit Workbench(BackendFor backend_for, SessionConfig base = {});
    ~Workbench();
    Workbench(const Workbench&) = delete;
    Workbench& operator=(const Workbench&) = delete;

    void set_hooks(Hooks h) { hooks_ = std::move(h); }

    // New sessions for model `m` on `prompt`. When the model refuses the prompt (longer than
    // its context, a word it lacks) the sessions start without one, the prompt is cleared and
    // the reason is returned; empty when the prompt was kept.
    std::string open(std::shared_ptr<const Model> m, const std::string& prompt);
    // New sessions for the current settings (after the backends changed), as open() does.
    std::string rebuild();
    // Drops the sessions (before the backends they run on go); rebuild() makes new ones.
    void drop_sessions();
    // Every session or none: a prompt the model refuses throws kvs::Error and changes nothing.
    // Without a model the text is kept for the next open().
    void set_prompt(const std::string& text);
    // New tokens each session may generate (-1: until the context is full). Rebuilds the
    // sessions; a limit the prompt leaves no room for throws and changes nothing.
    void set_limit(int max_new_tokens);
    // On and off switch the running session from its next step (its trace records each step's
    // mode) and drop a twin; compare adds the uncached twin, which replays the steps taken so far
    // so both stand at the same point. Bidirectional (and leaving it) makes the view's sessions
    // anew and replays as many steps; its bidirectional session takes the causal one's tokens.
    void set_view(CacheView v);
    void set_sampler(const SamplerConfig& s);  // from the next step on
    void set_timing(const TimingPolicy& t);    // from the next step on
    void set_time_each_op(bool on);            // Capture::time_each_op, from the next step on
    void set_trace_budget(std::size_t bytes);  // the sessions built from now on
    void reset();                              // every session back to its prompt

    // One step of each session that has not finished (the prefill first): cached, then its
    // uncached twin; compare mode's two prefills, the same work, are then timed again in turn
    // (core/session/step_timing.h's time_in_turn). Throws kvs::Error when there is no session.
    void step();

    const Model* model() const { return model_.get(); }
    const std::shared_ptr<const Model>& shared_model() const { return model_; }
    const std::string& prompt() const { return prompt_; }
    int limit() const { return base_.max_new_tokens; }
    CacheView view() const { return view_; }
    const SamplerConfig& sampler() const { return base_.sampler; }
    const TimingPolicy& timing() const { return base_.timing; }
    // The backend session i runs on (or would).
    Backend& backend(std::size_t session = 0) const { return backend_for_(session); }

    // One session, or two in compare mode (cached first); empty before a model.
    std::size_t sessions() const { return sessions_.size(); }
    Session& session(std::size_t i = 0) { return *sessions_.at(i); }
    const Session& session(std::size_t i = 0) const { return *sessions_.at(i); }
    const Session* twin() const { return sessions_.size() > 1 ? sessions_[1].get() : nullptr; }
    bool prefilled() const { return !sessions_.empty() && sessions_[0]->prefilled(); }
    // Every session finished (true without a session).
    bool finished() const;
    // Compare mode: max |logit difference| between the two sessions, per step (NaN where a step
    // kept no logits); empty otherwise.
    const std::vector<double>& logit_differences() const { return diffs_; }

  private:
    std::unique_ptr<Session> make_session(std::size_t i, CacheMode mode,
                                          AttentionMask mask = AttentionMask::Causal) const;
    // The view's sessions made anew, stepped as far as the first one was.
    void remake_and_replay(CacheView v);
    // The sessions for the current settings; throws when the model refuses the prompt.
    std::vector<std::unique_ptr<Session>> build() const { return build_for(view_); }
    std::vector<std::unique_ptr<Session>> build_for(CacheView v) const;
    const StepRecord* step_with_payload(std::size_t session, std::size_t k) const;
    void record_difference();  // the newest step both sessions have
    void notify(bool new_generation) const {
        if (hooks_.changed) hooks_.changed(new_generation);
    }
    void stepped(std::size_t i) const {
        if (hooks_.stepped) hooks_.stepped(i);
    }

    BackendFor backend_for_;
    SessionConfig base_;
    Hooks hooks_;
    std::shared_ptr<const Model> model_;
    std::string prompt_;
    CacheView view_ = CacheView::On;
    std::vector<std::unique_ptr<Session>> sessions_;
    std::vector<double> diffs_;
};

}  // namespace kvs
