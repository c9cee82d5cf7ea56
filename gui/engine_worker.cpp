#include "gui/engine_worker.h"

#include <chrono>
#include <cstdio>
#include <limits>
#include <new>
#include <sstream>

#include "core/loaders/model_loader.h"
#include "core/session/trace_csv.h"
#include "core/session/trace_events.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "kernels/gpu_step_probe.h"

namespace kvs::gui {

namespace {

SessionConfig worker_sessions() {
    SessionConfig c;
    c.trace_budget = 0;  // the newest step's payload only: the snapshot keeps the record
    // Every query row an uncached step computed stays openable in Inside attention.
    c.keep_every_query_row = true;
    return c;
}
}  // namespace

EngineWorker::EngineWorker()
    : bench_([this](std::size_t i) -> Backend& { return backend_for(i); }, worker_sessions()),
      lesson_(bench_, this) {
    Workbench::Hooks h;
    h.changed = [this](bool new_generation) { publish_sessions(new_generation); };
    h.stepped = [this](std::size_t i) { publish_step(i); };
    h.kept_step = [this](std::size_t i, std::size_t k) { return kept_step(i, k); };
    h.go_on = [this] { return !cancel_; };
    bench_.set_hooks(std::move(h));
    // Lesson 11's @gpu: the launches counted on the emulated backend, times where a GPU answers.
    lesson_.set_gpu_probe(
        [](const Model& m, const std::vector<int>& prompt) { return probe_gpu_step(m, prompt); });
#ifndef __EMSCRIPTEN__  // the page runs the requests on its main loop (run_pending)
    thread_ = std::thread([this] { loop(); });
#endif
}

EngineWorker::~EngineWorker() {
    {
        std::lock_guard<std::mutex> l(qmu_);
        stop_ = true;
        queue_.clear();
    }
    cancel_ = true;
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    bench_.drop_sessions();  // before the backends they run on
}

double EngineWorker::now() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void EngineWorker::post(EngineRequest request, std::function<void()> run, bool lesson) {
    Job job{std::move(request), std::move(run), lesson};
    {
        std::lock_guard<std::mutex> l(qmu_);
        if (stop_) return;
        queue_.push_back(std::move(job));
    }
    cv_.notify_all();
}

void EngineWorker::check_cancel() {
    if (cancel_) throw Cancelled{};
}

bool EngineWorker::idle() const {
    std::lock_guard<std::mutex> l(qmu_);
    return queue_.empty() && !running_;
}

void EngineWorker::wait_idle() const {
#ifdef __EMSCRIPTEN__
    // No worker thread in the page: the queue runs here, to its end.
    const_cast<EngineWorker*>(this)->run_pending(std::numeric_limits<double>::infinity());
#else
    std::unique_lock<std::mutex> l(qmu_);
    cv_.wait(l, [&] { return queue_.empty() && !running_; });
#endif
}

void EngineWorker::cancel() {
    {
        std::lock_guard<std::mutex> l(qmu_);
        queue_.clear();
    }
    cancel_ = true;
}

void EngineWorker::loop() {
    for (;;) {
        Job job;
        {
            std::unique_lock<std::mutex> l(qmu_);
            cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
            if (stop_) return;
            job = std::move(queue_.front());
            queue_.pop_front();
            running_ = true;
            cancel_ = false;
        }
        run_job(job);
    }
}

void EngineWorker::run_pending(double budget_s) {
    const double until = now() + budget_s;
    do {
        Job job;
        {
            std::lock_guard<std::mutex> l(qmu_);
            if (queue_.empty()) return;
            job = std::move(queue_.front());
            queue_.pop_front();
            running_ = true;
            cancel_ = false;
        }
        run_job(job);
    } while (now() < until);
}

void EngineWorker::run_job(Job& job) {
    {
        std::lock_guard<std::mutex> l(mu_);
        snap_.busy = true;
        snap_.busy_request = job.request;
        snap_.busy_done = 0;
        snap_.busy_total = 0;
        snap_.busy_since = now();
    }
    // Anything but a lesson step changes the sessions under the lesson: its next step
    // then replays from the start instead of building on them. A serving run has its own
    // scheduler and backend and leaves them alone.
    const EngineTask task = job.request.task;
    if (!job.lesson && task != EngineTask::ServeOpen && task != EngineTask::ServeStep)
        lesson_played_ = -1;
    std::string err;
    bool partly = false;
    try {
        job.run();
    } catch (const Cancelled&) {
    } catch (const PartlyDone& e) {
        err = e.what();
        partly = true;
    } catch (const Error& e) {
        err = e.what();
    } catch (const std::bad_alloc&) {
        err = "out of memory";
    } catch (const std::exception& e) {
        err = std::string("internal error: ") + e.what();
    }
    {
        std::lock_guard<std::mutex> l(mu_);
        snap_.busy = false;
        snap_.error = err;
        snap_.error_task = err.empty() || partly ? EngineTask::None : job.request.task;
        if (!err.empty()) ++snap_.error_serial;
    }
    {
        std::lock_guard<std::mutex> l(qmu_);
        running_ = false;
    }
    cv_.notify_all();
    wake();
}

Backend& EngineWorker::backend_for(std::size_t session) {
    while (backends_.size() <= session)
        backends_.push_back(make_backend(backend_name_, cpu_threads_));
    return *backends_[session].backend;
}

void EngineWorker::publish_sessions(bool new_generation) {
    if (replay_) return;  // the recorded run stays shown; the workbench keeps the settings
    std::vector<SessionView> views;
    for (std::size_t i = 0; i < bench_.sessions(); ++i) {
        const Session& s = bench_.session(i);
        SessionView v;
        v.trace.set_budget(view_budget_);
        v.mode = s.config().mode;
        v.mask = s.config().mask;
        v.view = bench_.view();
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
    snap_.model = bench_.shared_model();
    snap_.cache = bench_.view();
    snap_.prompt = bench_.prompt();
    snap_.sampler = bench_.sampler();
    snap_.backend_asked = backend_name_;
    if (!backends_.empty() && bench_.sessions() > 0) {
        snap_.backend_name = backends_[0].backend->name();
        snap_.backend_device = backends_[0].backend->device();
        snap_.backend_note = backends_[0].note;
    }
}

void EngineWorker::publish_step(std::size_t i) {
    const Session& s = bench_.session(i);
    // Only this thread writes the snapshot: reading its sizes needs no lock.
    const bool is_new = s.trace().steps().size() > snap_.sessions[i].trace.steps().size();
    StepRecord copy;
    if (is_new) copy = s.trace().back();  // copied outside the lock: a prefill can be large
    {
        std::lock_guard<std::mutex> lk(mu_);
        if (is_new) snap_.sessions[i].trace.push(std::move(copy));
        snap_.sessions[i].finish_reason = s.finish_reason();
        if (bench_.sessions() == 2) snap_.logit_max_diff = bench_.logit_differences();
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
    for (std::size_t i = 0; i < modes_for(bench_.view()).size(); ++i)
        backends.push_back(make_backend(backend_name_, cpu_threads_));
    return backends;
}

void EngineWorker::rebuild_on(std::vector<BackendChoice> backends) {
    bench_.drop_sessions();
    backends_ = std::move(backends);
    const std::string why = bench_.rebuild();
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
            if (!m && bench_.model())
                throw Error(std::string(first.what()) + " (still showing " +
                            bench_.model()->name() + ")");
            if (!m) throw;
        }
        auto backends = make_backends();
        end_replay();
        bench_.drop_sessions();
        backends_ = std::move(backends);
        bench_.set_limit(-1);  // a lesson's @limit belonged to its own model and prompt
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.model_spec = spec;
            snap_.model_note = note;
        }
        const std::string why =
            bench_.open(std::move(m), prompt.empty() ? bench_.prompt() : prompt);
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
        if (!bench_.model()) return publish_sessions(false);
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
        if (c == CacheView::Compare && bench_.sessions() > 0) {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_total = static_cast<int>(bench_.session(0).trace().steps().size());
        }
        progress_from_twin_ = true;
        try {
            bench_.set_view(c);
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
        bench_.set_prompt(text);
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
        TimingPolicy t = bench_.timing();
        t.runs = runs;
        bench_.set_timing(t);
    });
}

void EngineWorker::set_time_each_op(bool on) {
    // How future steps are timed; the sessions' steps so far stand, so a lesson's chain too.
    post(
        {EngineTask::SetTimingRuns}, [this, on] { bench_.set_time_each_op(on); }, true);
}

void EngineWorker::set_sampler(const SamplerConfig& s) {
    post({EngineTask::SetSampler}, [this, s] { bench_.set_sampler(s); });
}

void EngineWorker::reset() {
    post({EngineTask::Reset}, [this] {
        refuse_in_replay(
            "a recorded run cannot be run again: it shows what was recorded (open a model to run "
            "one)");
        bench_.reset();
    });
}

void EngineWorker::prefill() {
    post({EngineTask::Prefill}, [this] {
        refuse_in_replay(
            "a recorded run cannot run a step: it shows what was recorded (open a model to run "
            "one)");
        if (bench_.sessions() == 0) throw Error("no model is open");
        if (bench_.prefilled()) return;
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_total = 1;
        }
        bench_.step();
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
        if (bench_.sessions() == 0) throw Error("no model is open");
        const int total = n + (bench_.prefilled() ? 0 : 1);
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_total = total;
        }
        for (int k = 0; k < total && !cancel_; ++k) {
            if (bench_.finished()) break;
            bench_.step();
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_done = k + 1;
        }
    });
}

void EngineWorker::play_lesson(std::shared_ptr<const Lesson> lesson, int number, int step) {
    post(
        {EngineTask::LessonStep, {}, number, step + 1},
        [this, lesson, number, step] { play(*lesson, number, step); }, true);
}

void EngineWorker::publish_lesson(const std::vector<StepOutcome>* outcomes, int target,
                                  bool cancelled) {
    const LessonFacts f = lesson_.facts();
    std::lock_guard<std::mutex> lk(mu_);
    LessonRun& r = snap_.lesson;
    r.number = lesson_number_;
    if (outcomes) r.outcomes = *outcomes;
    r.target = target;
    r.cancelled = cancelled;
    r.batch = lesson_.last_batch();
    r.scale = lesson_.last_scale();
    r.gpu = lesson_.last_gpu();
    const auto& serve = lesson_.shown_serve();
    r.serve = serve ? std::shared_ptr<const ServePlan>(serve, &serve->plan) : nullptr;
    r.serve_steps = serve ? serve->run.shown_steps_run : 0;
    r.layer = f.highlight_layer;
    r.head = f.highlight_head;
    r.highlight_serial = highlight_serial_;
    r.explain_layer = f.explain_layer;
    r.explain_head = f.explain_head;
    r.explain_q_pos = explain_q_pos_;
    r.explain_serial = explain_serial_;
    r.explain_step = explain_step_;
    r.panel = lesson_panel_;
    ++r.serial;
}

void EngineWorker::play(const Lesson& lesson, int number, int step) {
    const bool next = number == lesson_number_ && step > 0 && lesson_played_ == step - 1;
    std::vector<StepOutcome> outcomes;
    if (next) {
        std::lock_guard<std::mutex> lk(mu_);
        outcomes = snap_.lesson.outcomes;
        outcomes.resize(static_cast<std::size_t>(step));
    }
    lesson_number_ = number;
    lesson_played_ = -1;  // until the step has run to its end
    end_replay();         // a lesson runs on live sessions
    publish_lesson(&outcomes, step, false);
    try {
        if (!next) {
            lesson_.restart();
            explain_q_pos_ = -1;
            explain_step_ = -1;
        }
        for (int k = next ? step : 0; k <= step; ++k) {
            check_cancel();
            playing_step_ = k;
            lesson_panel_.clear();  // @show points at a panel for the step that says so
            outcomes.push_back(play_step(lesson, k, lesson_));
            const bool stop = outcomes.back().error;
            publish_lesson(&outcomes, k < step && !stop ? step : -1, false);
            if (stop) return;  // a step that failed leaves the sessions half way: replay next
        }
        lesson_played_ = step;
    } catch (const Cancelled&) {
        publish_lesson(nullptr, -1, true);
        throw;
    }
}

void EngineWorker::refuse_in_replay(const char* why) const {
    if (replay_) throw Error(why);
}

void EngineWorker::end_replay() {
    if (!replay_) return;
    replay_.reset();
    std::lock_guard<std::mutex> lk(mu_);
    snap_.replay.reset();
    snap_.sessions.clear();
    snap_.logit_max_diff.clear();
    snap_.model = bench_.shared_model();
    ++snap_.generation;
}

void EngineWorker::open_replay(const std::string& path) {
    post({EngineTask::OpenReplay, path}, [this, path] {
        RecordedRun run = read_trace_file(path);  // a bad file changes nothing shown
        bench_.drop_sessions();                   // the live sessions give way to the recording
        std::vector<SessionView> views;
        bool bidirectional = false;  // a recording of the bidirectional view: its steps say so
        for (RecordedSession& rs : run.sessions) {
            SessionView v;
            v.mode = rs.mode;
            v.trace = std::move(rs.trace);
            v.prompt_tokens.assign(rs.tokens.begin(), rs.tokens.begin() + rs.prompt_len);
            v.finish_reason = rs.finish;
            if (!v.trace.empty()) v.mask = v.trace.steps()[0].mask;
            bidirectional |= v.mask == AttentionMask::Bidirectional;
            views.push_back(std::move(v));
        }
        const CacheView view = bidirectional   ? CacheView::Bidirectional
                               : run.compare() ? CacheView::Compare
                               : run.sessions[0].mode == CacheMode::Cached ? CacheView::On
                                                                           : CacheView::Off;
        for (SessionView& v : views) v.view = view;
        const Tokenizer& tok = run.model->tokenizer();
        std::string prompt;
        for (int t : views[0].prompt_tokens)
            if (t != tok.bos()) prompt += tok.piece(t);
        // The pieces of a llama2.c vocabulary carry the space before a word: the text
        // starts after the first one, as run.c prints it.
        if (!prompt.empty() && prompt[0] == ' ') prompt.erase(0, 1);
        auto source = std::make_shared<ReplaySource>();
        source->path = path;
        source->recorded = run.recorded;
        source->version = run.version;
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.sessions = std::move(views);
            snap_.logit_max_diff = run.logit_max_diff;
            ++snap_.generation;
            snap_.model = run.model;
            snap_.model_spec = path;
            snap_.model_note.clear();
            snap_.cache = view;
            snap_.prompt = prompt;
            snap_.sampler = run.sampler;
            snap_.replay = source;
            snap_.backend_name = run.recorded.backend;
            snap_.backend_device = run.recorded.device;
            snap_.backend_note.clear();
        }
        replay_ = std::move(run);
    });
}

TraceJsonRun EngineWorker::run_shown() const {
    TraceJsonRun r;
    r.model = snap_.model.get();
    if (!r.model || snap_.sessions.empty()) throw Error("nothing to export: no model is open");
    if (replay_) {
        r.sampler = replay_->sampler;
        r.recorded = replay_->recorded;
    } else {
        r.sampler = bench_.sampler();
        const StepRecord* last =
            snap_.sessions[0].trace.empty() ? nullptr : &snap_.sessions[0].trace.back();
        r.recorded =
            recorded_here("kvscope", last ? last->backend : snap_.backend_name,
                          last ? last->device : snap_.backend_device, bench_.timing().runs);
    }
    const std::size_t n = replay_ ? replay_->sessions.size() : bench_.sessions();
    for (std::size_t i = 0; i < std::min(n, snap_.sessions.size()); ++i) {
        TraceJsonSession t;
        t.mode = snap_.sessions[i].mode;
        t.trace = &snap_.sessions[i].trace;
        if (replay_) {
            const RecordedSession& rs = replay_->sessions[i];
            t.tokens = rs.tokens;
            t.prompt_len = rs.prompt_len;
            t.text = rs.text;
            t.finish = rs.finish;
        } else {
            const Session& s = bench_.session(i);
            t.mode = s.config().mode;
            t.tokens = s.tokens();
            t.prompt_len = s.prompt_len();
            t.text = s.text();
            t.finish = s.finish_reason();
        }
        r.sessions.push_back(t);
    }
    r.logit_max_diff = snap_.logit_max_diff;
    return r;
}

void EngineWorker::export_run(std::vector<ExportFile> files) {
    post({EngineTask::ExportRun}, [this, files] {
        // The snapshot is read without its lock: only this thread writes it.
        const TraceJsonRun run = run_shown();
        std::vector<std::string> written;
        for (const ExportFile& f : files) {
            std::ostringstream out;
            OutputKind kind;
            switch (f.kind) {
                case ExportFile::Kind::TraceJson:
                    write_trace_json(out, run);
                    kind = trace_json_output();
                    break;
                case ExportFile::Kind::TraceEvents:
                    write_trace_events(out, run);
                    kind = trace_events_output();
                    break;
                case ExportFile::Kind::StepsCsv:
                    write_steps_csv(out, run);
                    kind = steps_csv_output();
                    break;
                case ExportFile::Kind::AttentionCsv: {
                    kind = attention_csv_output();
                    const std::size_t i =
                        std::min<std::size_t>(std::max(f.session, 0), run.sessions.size() - 1);
                    write_attention_csv(out, run.sessions[i].trace->steps(), f.step, f.layer,
                                        f.head, run.model->tokenizer());
                    break;
                }
            }
            write_output_file(f.path, out.str(), kind);
            written.push_back(f.path);
        }
        std::lock_guard<std::mutex> lk(mu_);
        snap_.exported = std::move(written);
        ++snap_.export_serial;
    });
}

void EngineWorker::model_loaded(const std::string& spec) {
    std::lock_guard<std::mutex> lk(mu_);
    snap_.model_spec = spec;
    snap_.model_note.clear();
}

void EngineWorker::shown(const std::string& panel) {
    lesson_panel_ = panel;
}

void EngineWorker::highlighted(int, int) {
    ++highlight_serial_;
}

void EngineWorker::explained(int, int, int q_pos) {
    explain_q_pos_ = q_pos;
    explain_step_ = playing_step_;
    ++highlight_serial_;
    ++explain_serial_;
}

}  // namespace kvs::gui
