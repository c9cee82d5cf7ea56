#pragma once
// The hand-off between the window and the engine. A worker thread (in the page: the main loop,
// through run_pending) owns the backends and the
// Workbench (core/session/workbench.h: the model, the Session or compare pair) and runs every
// request in order (opening a model, prefill, decode steps), so a long uncached step at 512 tokens
// never freezes the window. After each step it copies the new StepRecord into the snapshot's trace
// under a mutex; the window holds that mutex while it draws a frame and reads only the snapshot.
// The worker needs the lock just to publish, so it waits at most one frame; the window never waits
// for a step.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/session/trace_json.h"
#include "core/session/workbench.h"
#include "core/util/error.h"
#include "gui/engine/snapshot.h"
#include "kernels/backend_factory.h"
#include "lessonlib/lesson.h"
#include "lessonlib/lesson_observer.h"
#include "lessonlib/session_lesson_target.h"

namespace kvs::gui {

struct ServingJob;  // the worker's serving run (gui/engine/serving.cpp)

// The worker is the lesson target's observer: @show, @highlight and @explain reach the window
// through it, and its cancel stops a lesson mid-directive.
class EngineWorker : private LessonObserver {
  public:
    EngineWorker();
    ~EngineWorker();
    EngineWorker(const EngineWorker&) = delete;
    EngineWorker& operator=(const EngineWorker&) = delete;

    // Requests, queued and run in order on the worker thread. Failures land in snapshot().error.
    // open_model tries `spec`, then each fallback, and says in model_note why it fell back;
    // a non-empty `prompt` replaces the prompt for the new model (the toy knows few words).
    void open_model(const std::string& spec, const std::string& tokenizer = {},
                    const std::vector<std::string>& fallbacks = {}, const std::string& prompt = {});
    // Shows the run recorded in the trace JSON at `path` (core/session/trace_reader.h) in place
    // of the live sessions, at its last step; a file that is not one leaves what was shown.
    // Opening a model (or a lesson) returns to live sessions.
    void open_replay(const std::string& path);
    // Writes the run shown, live or replayed, as `files` say (trace JSON, trace events, CSV);
    // snapshot().exported names them, or snapshot().error says why not.
    void export_run(std::vector<ExportFile> files);
    // cpu_threads: the CPU backend's threads (0: keep the current count, 1 at start).
    void set_backend(const std::string& name, int cpu_threads = 0);
    void set_cache(CacheView c);
    void set_prompt(const std::string& text);
    void set_sampler(const SamplerConfig& s);
    // The memory budget of the traces the window draws (Trace::kDefaultBudget unless set): past
    // it the oldest steps lose their payloads.
    void set_trace_budget(std::size_t bytes);
    // Tokens a session may hold in every model opened from now on (0: each model's own context;
    // kvscope --context N, as kvscope-cli's): the KV cache is allocated for this many.
    void set_context(int tokens) { context_ = tokens; }
    // Each step under 10 ms is timed as the median of `runs` runs of it
    // (core/session/step_timing.h).
    void set_timing_runs(int runs);
    // Every op timed, op by op (the op strip open), or the fast path (closed): from the next step.
    void set_time_each_op(bool on);
    void reset();
    void prefill();
    void decode(int n);  // prefill first when needed; stops early when generation finishes
    // Plays step `step` (0-based) of `lesson` on the live sessions: the next step on top of the
    // ones played, else a replay from the first step. `number` names the lesson (its NN); the
    // languages share directives, so switching language needs no replay.
    void play_lesson(std::shared_ptr<const Lesson> lesson, int number, int step);
    // The Serving view's run (gui/engine/serving.cpp): a scheduler over the open model, on a CPU
    // backend of its own, with `setup`'s prompts queued; then `n` more steps (fewer when every
    // request finishes). Each step's ServeShot is published in snapshot().serving.
    void serve_open(const ServeSetup& setup);
    void serve_step(int n);
    // Drops queued requests; a run of decode steps stops after the step in flight.
    void cancel();

    // Called on the worker thread after each published change (e.g. glfwPostEmptyEvent, so a
    // window that sleeps between events redraws). Set it before the first request.
    void set_wake(std::function<void()> f) { wake_ = std::move(f); }

    bool idle() const;
    void wait_idle() const;
    // The page (Emscripten, no threads): runs queued requests on the caller's thread, at least
    // one and then more until `budget_s` seconds have passed. The desktop's thread does this.
    void run_pending(double budget_s);
    static double now();

    // Hold the lock while reading the snapshot.
    std::unique_lock<std::mutex> lock() const { return std::unique_lock<std::mutex>(mu_); }
    const EngineSnapshot& snapshot() const { return snap_; }

  private:
    struct Job {
        EngineRequest request;  // for the busy banner, and the start of the message when it fails
        std::function<void()> run;
        bool lesson = false;  // a lesson step: keeps the lesson's sequence of steps intact
    };
    void post(EngineRequest request, std::function<void()> run, bool lesson = false);
    void loop();
    void run_job(Job& job);  // runs one request and publishes how it ended
    // Worker thread only. Backends are made first: when one cannot be had (CUDA asked, none
    // answers) make_backends throws and the old sessions stay.
    std::vector<BackendChoice> make_backends() const;
    // New sessions on `backends`; a prompt the model refuses is dropped and said (PartlyDone).
    void rebuild_on(std::vector<BackendChoice> backends);
    Backend& backend_for(std::size_t session);
    // The Workbench's hooks: copy its sessions and each new step into the snapshot.
    void publish_sessions(bool new_generation);
    void publish_step(std::size_t session);
    const StepRecord* kept_step(std::size_t session, std::size_t step) const;
    void check_cancel() override;  // throws Cancelled when cancel() was called
    struct Cancelled {};
    // The job did its work but something in it was not kept (a prompt too long for the new
    // model): shown as the message alone, without "could not ...".
    struct PartlyDone : Error {
        using Error::Error;
    };

    // A recorded run, shown in place of the sessions: engine requests are refused.
    void refuse_in_replay(const char* why) const;  // throws Error(why) while replaying
    void end_replay();
    TraceJsonRun run_shown() const;  // worker thread: the snapshot's sessions as trace_json takes

    // Lessons: steps played on the workbench through the one lesson target.
    void play(const Lesson& lesson, int number, int step);
    void publish_lesson(const std::vector<StepOutcome>* outcomes, int target, bool cancelled);
    void model_loaded(const std::string& spec) override;
    void shown(const std::string& panel) override;
    void highlighted(int layer, int head) override;
    void explained(int layer, int head, int q_pos) override;

    // Worker-thread state.
    std::shared_ptr<ServingJob> serve_;  // the serving run (gui/engine/serving.cpp)
    void publish_serving();
    void serve_start(const ServeSetup& setup);  // serve_open's work, on the worker thread
    // The recorded run shown: its sessions' tokens and text (their traces are the snapshot's),
    // sampler and origin; empty for live sessions.
    std::optional<RecordedRun> replay_;
    std::string backend_name_ = "auto";
    int cpu_threads_ = 1;
    std::atomic<int> context_{0};  // set by the window's thread, read by the worker's
    std::size_t view_budget_ = Trace::kDefaultBudget;  // the snapshot's traces
    bool progress_from_twin_ = false;  // compare mode catching up: the twin's steps are progress
    // Declared before the workbench: its sessions run on these until it is gone.
    std::vector<BackendChoice> backends_;  // session i on backends_[i]
    // The sessions keep only their newest step's payload (the snapshot's trace is the record),
    // except under a lesson, whose checks read earlier steps: then the default budget.
    Workbench workbench_;
    SessionLessonTarget lesson_;
    int lesson_number_ = 0;   // the lesson whose steps the sessions hold
    int lesson_played_ = -1;  // its last step played on them; -1: replay before the next step
    std::uint64_t highlight_serial_ = 0, explain_serial_ = 0;
    int explain_q_pos_ = -1;    // the last @explain's query position, as the panel takes it
    int explain_step_ = -1;     // the lesson step of the last @explain
    int playing_step_ = -1;     // the lesson step being played
    std::string lesson_panel_;  // the last @show of the step played last
    std::function<void()> wake_;
    void wake() const {
        if (wake_) wake_();
    }

    // Two locks, always taken in this order when both are needed: mu_ (the snapshot; the window
    // holds it for a frame, and requests made while drawing post under it), then qmu_ (the
    // queue). The worker never holds one while taking the other.
    mutable std::mutex mu_;
    mutable std::mutex qmu_;
    mutable std::condition_variable cv_;  // with qmu_
    std::deque<Job> queue_;
    bool running_ = false;
    bool stop_ = false;
    std::atomic<bool> cancel_{false};
    EngineSnapshot snap_;
    std::thread thread_;
};

}  // namespace kvs::gui
