// The live sessions: the model opened, the backend, the cache view, the prompt and the sampler
// changed, the steps run on the Workbench, and each new step copied into the snapshot.
#include "gui/engine/engine_worker.h"

#include <cstdio>
#include <limits>
#include <new>
#include <sstream>

#include "core/loaders/model_loader.h"
#include "core/util/error.h"

namespace kvs::gui {

Backend& EngineWorker::backend_for(std::size_t session) {
    while (backends_.size() <= session)
        backends_.push_back(make_backend(backend_name_, cpu_threads_));
    return *backends_[session].backend;
}

void EngineWorker::publish_sessions(bool new_generation) {
    if (replay_) return;  // the recorded run stays shown; the workbench keeps the settings
    std::vector<SessionView> views;
    for (std::size_t i = 0; i < workbench_.sessions(); ++i) {
        const Session& s = workbench_.session(i);
        SessionView v;
        v.trace.set_budget(view_budget_);
        v.mode = s.config().mode;
        v.mask = s.config().mask;
        v.view = workbench_.view();
        v.prompt_tokens.assign(s.tokens().begin(), s.tokens().begin() + s.prompt_len());
        v.finish_reason = s.finish_reason();
        views.push_back(std::move(v));
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (new_generation) {
        snap_.sessions = std::move(views);
        snap_.logit_max_diff.clear();
        ++snap_.generation;
    } else {
        if (views.size() != snap_.sessions.size()) {
            // Into or out of compare: the cached session's trace goes on, a twin starts empty.
            snap_.sessions.resize(views.size());
            for (auto& v : snap_.sessions) v.trace.set_budget(view_budget_);
            snap_.logit_max_diff.clear();
        }
        for (std::size_t i = 0; i < views.size(); ++i) {
            snap_.sessions[i].mode = views[i].mode;
            snap_.sessions[i].mask = views[i].mask;
            snap_.sessions[i].view = views[i].view;
            snap_.sessions[i].prompt_tokens = std::move(views[i].prompt_tokens);
            snap_.sessions[i].finish_reason = views[i].finish_reason;
        }
    }
    snap_.model = workbench_.shared_model();
    snap_.cache = workbench_.view();
    snap_.prompt = workbench_.prompt();
    snap_.sampler = workbench_.sampler();
    snap_.backend_asked = backend_name_;
    if (!backends_.empty() && workbench_.sessions() > 0) {
        snap_.backend_name = backends_[0].backend->name();
        snap_.backend_device = backends_[0].backend->device();
        snap_.backend_note = backends_[0].note;
    }
}

void EngineWorker::publish_step(std::size_t i) {
    const Session& s = workbench_.session(i);
    // Only this thread writes the snapshot: reading its sizes needs no lock.
    const bool is_new = s.trace().steps().size() > snap_.sessions[i].trace.steps().size();
    StepRecord copy;
    if (is_new) copy = s.trace().back();  // copied outside the lock: a prefill can be large
    {
        std::lock_guard<std::mutex> lk(mu_);
        if (is_new) snap_.sessions[i].trace.push(std::move(copy));
        snap_.sessions[i].finish_reason = s.finish_reason();
        if (workbench_.sessions() == 2) snap_.logit_max_diff = workbench_.logit_differences();
        if (progress_from_twin_ && i == 1)
            snap_.busy_done = static_cast<int>(snap_.sessions[1].trace.steps().size());
    }
    wake();
}

const StepRecord* EngineWorker::kept_step(std::size_t session, std::size_t step) const {
    if (session >= snap_.sessions.size()) return nullptr;
    const auto& steps = snap_.sessions[session].trace.steps();
    return step < steps.size() && !steps[step].logits.empty() ? &steps[step] : nullptr;
}

std::vector<BackendChoice> EngineWorker::make_backends() const {
    std::vector<BackendChoice> backends;
    for (std::size_t i = 0; i < modes_for(workbench_.view()).size(); ++i)
        backends.push_back(make_backend(backend_name_, cpu_threads_));
    return backends;
}

void EngineWorker::rebuild_on(std::vector<BackendChoice> backends) {
    workbench_.drop_sessions();
    backends_ = std::move(backends);
    const std::string why = workbench_.rebuild();
    // The model (or backend) did switch: not "could not open the model".
    if (!why.empty()) throw PartlyDone(why + "; the prompt was not kept, the sessions start empty");
}

void EngineWorker::open_model(const std::string& spec, const std::string& tokenizer,
                              const std::vector<std::string>& fallbacks,
                              const std::string& prompt) {
    post({EngineTask::OpenModel, spec}, [this, spec, tokenizer, fallbacks, prompt] {
        const OpenLimits limits{context_, {host_memory_budget()}};
        std::unique_ptr<Model> m;
        std::string note;
        try {
            m = kvs::open_model(spec, tokenizer, limits);
        } catch (const Error& first) {
            for (const auto& fb : fallbacks) {
                try {
                    m = kvs::open_model(fb, {}, limits);
                    note = std::string(first.what()) + "; showing " + fb + " instead";
                    break;
                } catch (const Error&) {
                }
            }
            // The model open so far stays, with its sessions: say so.
            if (!m && replay_)
                throw Error(std::string(first.what()) + " (still showing the recorded run)");
            if (!m && workbench_.model())
                throw Error(std::string(first.what()) + " (still showing " +
                            workbench_.model()->name() + ")");
            if (!m) throw;
        }
        auto backends = make_backends();
        end_replay();
        workbench_.drop_sessions();
        backends_ = std::move(backends);
        workbench_.set_limit(-1);  // a lesson's @limit belonged to its own model and prompt
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.model_spec = spec;
            snap_.model_note = note;
        }
        const std::string why =
            workbench_.open(std::move(m), prompt.empty() ? workbench_.prompt() : prompt);
        if (!why.empty())
            throw PartlyDone(why + "; the prompt was not kept, the sessions start empty");
    });
}

void EngineWorker::set_backend(const std::string& name, int cpu_threads) {
    post({EngineTask::SwitchBackend, name}, [this, name, cpu_threads] {
        const std::string old = backend_name_;
        const int old_threads = cpu_threads_;
        backend_name_ = name;
        if (cpu_threads > 0) cpu_threads_ = cpu_threads;
        // A recorded run ran where it ran: the choice waits for the next model.
        if (replay_) return;
        if (!workbench_.model()) return publish_sessions(false);
        std::vector<BackendChoice> backends;
        try {
            backends = make_backends();
        } catch (const Error&) {
            backend_name_ = old;  // the sessions stay as they were
            cpu_threads_ = old_threads;
            publish_sessions(false);
            throw;
        }
        rebuild_on(std::move(backends));
    });
}

void EngineWorker::set_cache(CacheView c) {
    post({EngineTask::SwitchCache}, [this, c] {
        refuse_in_replay(
            "a recorded run shows the cache mode it was recorded in (open a model to switch it)");
        // Into compare mid-run the uncached twin replays the steps so far: its steps are
        // the progress shown.
        if (c == CacheView::Compare && workbench_.sessions() > 0) {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_total = static_cast<int>(workbench_.session(0).trace().steps().size());
        }
        progress_from_twin_ = true;
        try {
            workbench_.set_view(c);
        } catch (...) {
            progress_from_twin_ = false;
            throw;
        }
        progress_from_twin_ = false;
    });
}

void EngineWorker::set_prompt(const std::string& text) {
    post({EngineTask::SetPrompt}, [this, text] {
        refuse_in_replay("a recorded run keeps its prompt (open a model to try another)");
        workbench_.set_prompt(text);
    });
}

void EngineWorker::set_trace_budget(std::size_t bytes) {
    post({EngineTask::SetTraceBudget}, [this, bytes] {
        view_budget_ = bytes;
        if (replay_) return;  // a recorded run keeps every step it holds
        std::lock_guard<std::mutex> lk(mu_);
        for (auto& v : snap_.sessions) v.trace.set_budget(bytes);
    });
}

void EngineWorker::set_timing_runs(int runs) {
    post({EngineTask::SetTimingRuns}, [this, runs] {
        TimingPolicy t = workbench_.timing();
        t.runs = runs;
        workbench_.set_timing(t);
    });
}

void EngineWorker::set_time_each_op(bool on) {
    // How future steps are timed; the sessions' steps so far stand, so a lesson's chain too.
    post(
        {EngineTask::SetTimingRuns}, [this, on] { workbench_.set_time_each_op(on); }, true);
}

void EngineWorker::set_sampler(const SamplerConfig& s) {
    post({EngineTask::SetSampler}, [this, s] { workbench_.set_sampler(s); });
}

void EngineWorker::reset() {
    post({EngineTask::Reset}, [this] {
        refuse_in_replay(
            "a recorded run cannot be run again: it shows what was recorded (open a model to run "
            "one)");
        workbench_.reset();
    });
}

void EngineWorker::prefill() {
    post({EngineTask::Prefill}, [this] {
        refuse_in_replay(
            "a recorded run cannot run a step: it shows what was recorded (open a model to run "
            "one)");
        if (workbench_.sessions() == 0) throw Error("no model is open");
        if (workbench_.prefilled()) return;
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_total = 1;
        }
        workbench_.step();
    });
}

void EngineWorker::decode(int n) {
#ifdef __EMSCRIPTEN__
    // The page has no worker thread (docs/web.md, "How it runs": no SharedArrayBuffer on a static
    // host): a run of steps is one request per step, so the main loop draws frames between them
    // (run_pending) and the page never freezes; cancel() drops the steps not yet run.
    if (n > 1) {
        for (int k = 0; k < n; ++k) decode(1);
        return;
    }
#endif
    post({EngineTask::Decode, {}, n}, [this, n] {
        refuse_in_replay(
            "a recorded run cannot run a step: it shows what was recorded (open a model to run "
            "one)");
        if (workbench_.sessions() == 0) throw Error("no model is open");
        const int total = n + (workbench_.prefilled() ? 0 : 1);
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_total = total;
        }
        for (int k = 0; k < total && !cancel_; ++k) {
            if (workbench_.finished()) break;
            workbench_.step();
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_done = k + 1;
        }
    });
}

}  // namespace kvs::gui
