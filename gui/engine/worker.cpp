// The worker's thread and its queue: requests run in order, each publishing how it ended.
#include "gui/engine/engine_worker.h"

#include <chrono>
#include <new>

#include "core/util/error.h"
#include "kernels/gpu_step_probe.h"

namespace kvs::gui {

namespace {

SessionConfig worker_sessions() {
    SessionConfig c;
    c.trace_budget = 0;  // the newest step's payload only: the snapshot keeps the record
    // Every query row an uncached step computed stays openable in Inside attention.
    c.keep_every_query_row = true;
    // Where q, k and v came from, for Inside attention's first stages: copied with the rest of
    // the step's captures (on a GPU 6 device copies a layer, in the step's one download; a pass
    // through the fused decode kernels keeps none, and the panel says so).
    c.capture.projections = true;
    return c;
}
}  // namespace

EngineWorker::EngineWorker()
    : workbench_([this](std::size_t i) -> Backend& { return backend_for(i); }, worker_sessions()),
      lesson_(workbench_, this) {
    Workbench::Hooks h;
    h.changed = [this](bool new_generation) { publish_sessions(new_generation); };
    h.stepped = [this](std::size_t i) { publish_step(i); };
    h.kept_step = [this](std::size_t i, std::size_t k) { return kept_step(i, k); };
    h.go_on = [this] { return !cancel_; };
    workbench_.set_hooks(std::move(h));
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
    workbench_.drop_sessions();  // before the backends they run on
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

}  // namespace kvs::gui
