#include "gui/engine_worker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>

#include "core/error.h"
#include "core/logit_difference.h"
#include "core/model_loader.h"
#include "gui/engine_lesson_target.h"
#include "gui/strings.h"

namespace kvs::gui {

namespace {

const char* label_for(CacheMode m) {
    return m == CacheMode::Cached ? tr_later("with KV cache") : tr_later("without KV cache");
}

}  // namespace

EngineWorker::EngineWorker() : lesson_(std::make_unique<LessonDriver>(*this)) {
#ifndef __EMSCRIPTEN__
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
    lesson_.reset();
    live_.clear();  // sessions before the model they refer to
}

double EngineWorker::now() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void EngineWorker::post(Job job) {
    {
        std::lock_guard<std::mutex> l(qmu_);
        if (stop_) return;
        queue_.push_back(std::move(job));
    }
    cv_.notify_all();
}

void EngineWorker::check_cancel() const {
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
        snap_.busy_what = job.what;
        snap_.busy_done = 0;
        snap_.busy_total = 0;
        snap_.busy_since = now();
    }
    // Anything but a lesson step changes the sessions under the lesson: its next step
    // then replays from the start instead of building on them.
    if (!job.lesson) lesson_->lose_place();
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
        snap_.error_context = err.empty() || partly ? "" : job.failure;
        if (!err.empty()) ++snap_.error_serial;
    }
    {
        std::lock_guard<std::mutex> l(qmu_);
        running_ = false;
    }
    cv_.notify_all();
    wake();
}

bool EngineWorker::prefilled() const {
    return !live_.empty() && live_[0]->session->prefilled();
}

void EngineWorker::publish_sessions(bool new_generation) {
    std::vector<SessionView> views;
    for (const auto& l : live_) {
        SessionView v;
        v.trace.set_budget(view_budget_);
        v.mode = l->session->config().mode;
        v.label = label_for(v.mode);
        v.prompt_tokens.assign(l->session->tokens().begin(),
                               l->session->tokens().begin() + l->session->prompt_len());
        v.finish_reason = l->session->finish_reason();
        views.push_back(std::move(v));
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (new_generation || views.size() != snap_.sessions.size()) {
        snap_.sessions = std::move(views);
        snap_.logit_max_diff.clear();
        ++snap_.generation;
    } else {
        for (std::size_t i = 0; i < views.size(); ++i) {
            snap_.sessions[i].mode = views[i].mode;
            snap_.sessions[i].label = views[i].label;
            snap_.sessions[i].prompt_tokens = std::move(views[i].prompt_tokens);
            snap_.sessions[i].finish_reason = views[i].finish_reason;
        }
    }
    snap_.model = model_;
    snap_.cache = cache_;
    snap_.prompt = prompt_;
    snap_.sampler = sampler_;
    snap_.backend_asked = backend_name_;
    if (!live_.empty()) {
        snap_.backend_name = live_[0]->backend.backend->name();
        snap_.backend_device = live_[0]->backend.backend->device();
        snap_.backend_note = live_[0]->backend.note;
    }
}

std::vector<BackendChoice> EngineWorker::make_backends() const {
    std::vector<BackendChoice> backends;
    for (std::size_t i = 0; i < modes_for(cache_).size(); ++i)
        backends.push_back(make_backend(backend_name_, cpu_threads_));
    return backends;
}

void EngineWorker::rebuild_sessions() {
    build_sessions(make_backends());
}

void EngineWorker::build_sessions(std::vector<BackendChoice> backends) {
    live_.clear();
    std::string prompt_error;
    const auto modes = modes_for(cache_);
    for (std::size_t i = 0; i < modes.size(); ++i) {
        auto l = std::make_unique<Live>();
        l->backend = std::move(backends[i]);
        SessionConfig cfg;
        cfg.mode = modes[i];
        cfg.sampler = sampler_;
        cfg.max_new_tokens = limit_;
        cfg.trace_budget = trace_budget_;
        cfg.timing = timing_;
        l->session = std::make_unique<Session>(*model_, *l->backend.backend, cfg);
        if (!prompt_.empty()) {
            try {
                l->session->set_prompt(prompt_);
            } catch (const Error& e) {
                // E.g. a model whose context is shorter than the prompt: the sessions still get
                // an (empty) prompt, so Prefill and Step keep working on the new model.
                prompt_error = e.what();
                try {
                    l->session->set_prompt("");
                } catch (const Error&) {
                }
            }
        }
        live_.push_back(std::move(l));
    }
    if (!prompt_error.empty()) prompt_.clear();
    publish_sessions(true);
    // The model (or backend, or cache mode) did switch: not "could not open the model".
    if (!prompt_error.empty())
        throw PartlyDone(prompt_error + "; the prompt was not kept, the sessions start empty");
}

void EngineWorker::step_all() {
    for (std::size_t i = 0; i < live_.size(); ++i) {
        Session& s = *live_[i]->session;
        if (s.finished()) continue;
        s.step();
        StepRecord copy = s.trace().back();  // copied outside the lock: a prefill can be large
        std::lock_guard<std::mutex> lk(mu_);
        snap_.sessions[i].trace.push(std::move(copy));
        snap_.sessions[i].finish_reason = s.finish_reason();
    }
    wake();
    if (live_.size() == 2) {
        std::lock_guard<std::mutex> lk(mu_);
        const auto& a = snap_.sessions[0].trace.steps();
        const auto& b = snap_.sessions[1].trace.steps();
        const std::size_t n = std::min(a.size(), b.size());
        snap_.logit_max_diff.resize(n, std::numeric_limits<double>::quiet_NaN());
        if (n > 0) snap_.logit_max_diff[n - 1] = max_logit_difference(a[n - 1], b[n - 1]);
    }
}

void EngineWorker::drop_twin() {
    if (live_.size() < 2) return;
    live_.resize(1);
    std::lock_guard<std::mutex> lk(mu_);
    snap_.sessions.resize(1);
    snap_.logit_max_diff.clear();
}

void EngineWorker::open_model(const std::string& spec, const std::string& tokenizer,
                              const std::vector<std::string>& fallbacks,
                              const std::string& prompt) {
    char what[256];
    std::snprintf(what, sizeof what, tr("opening %s"), spec.c_str());
    post({what, tr_later("could not open the model"), [this, spec, tokenizer, fallbacks, prompt] {
              std::unique_ptr<Model> m;
              std::string note;
              try {
                  m = kvs::open_model(spec, tokenizer);
              } catch (const Error& first) {
                  for (const auto& fb : fallbacks) {
                      try {
                          m = kvs::open_model(fb);
                          note = std::string(first.what()) + "; showing " + fb + " instead";
                          break;
                      } catch (const Error&) {
                      }
                  }
                  // The model open so far stays, with its sessions: say so.
                  if (!m && model_)
                      throw Error(std::string(first.what()) + " (still showing " + model_->name() +
                                  ")");
                  if (!m) throw;
              }
              live_.clear();
              model_ = std::move(m);
              limit_ = -1;  // a lesson's @limit belonged to its own model and prompt
              if (!prompt.empty()) prompt_ = prompt;
              {
                  std::lock_guard<std::mutex> lk(mu_);
                  snap_.model_spec = spec;
                  snap_.model_note = note;
              }
              rebuild_sessions();
          }});
}

void EngineWorker::set_backend(const std::string& name, int cpu_threads) {
    char what[128];
    std::snprintf(what, sizeof what, tr("switching the backend to %s"), name.c_str());
    post({what, tr_later("could not switch the backend"), [this, name, cpu_threads] {
              const std::string old = backend_name_;
              const int old_threads = cpu_threads_;
              backend_name_ = name;
              if (cpu_threads > 0) cpu_threads_ = cpu_threads;
              if (!model_) return publish_sessions(false);
              std::vector<BackendChoice> backends;
              try {
                  backends = make_backends();
              } catch (const Error&) {
                  backend_name_ = old;  // the sessions stay as they were
                  cpu_threads_ = old_threads;
                  publish_sessions(false);
                  throw;
              }
              build_sessions(std::move(backends));
          }});
}

void EngineWorker::set_cache(CacheView c) {
    post({tr("switching the cache mode"), tr_later("could not switch the cache mode"), [this, c] {
              const CacheView before = cache_;
              if (!model_ || live_.empty() || c != CacheView::Compare) {
                  cache_ = c;
                  if (live_.empty()) return publish_sessions(false);
                  // The same session goes on in the other mode from the next step: the trace
                  // records each step's mode. Leaving compare drops the uncached twin.
                  drop_twin();
                  live_[0]->session->set_mode(c == CacheView::Off ? CacheMode::Uncached
                                                                  : CacheMode::Cached);
                  return publish_sessions(false);
              }
              if (before == CacheView::Compare) return;
              // Into compare: the first session goes on with the cache, a second one without it
              // replays the same number of steps so both stand at the same point.
              auto l = std::make_unique<Live>();
              l->backend = make_backend(backend_name_, cpu_threads_);
              SessionConfig cfg;
              cfg.mode = CacheMode::Uncached;
              cfg.sampler = sampler_;
              cfg.max_new_tokens = limit_;
              cfg.trace_budget = trace_budget_;
              cfg.timing = timing_;
              l->session = std::make_unique<Session>(*model_, *l->backend.backend, cfg);
              Session& s0 = *live_[0]->session;
              if (s0.prompt_len() > 0)
                  l->session->set_prompt_tokens(
                      std::vector<int>(s0.tokens().begin(), s0.tokens().begin() + s0.prompt_len()));
              cache_ = c;
              s0.set_mode(CacheMode::Cached);
              live_.push_back(std::move(l));
              {
                  std::lock_guard<std::mutex> lk(mu_);
                  SessionView v;
                  v.trace.set_budget(view_budget_);
                  v.mode = CacheMode::Uncached;
                  v.label = label_for(v.mode);
                  snap_.sessions.push_back(std::move(v));
                  snap_.logit_max_diff.clear();
              }
              publish_sessions(false);
              const int target = static_cast<int>(s0.trace().steps().size());
              Session& s1 = *live_[1]->session;
              {
                  std::lock_guard<std::mutex> lk(mu_);
                  snap_.busy_total = target;
              }
              for (int k = 0; k < target && !s1.finished() && !cancel_; ++k) {
                  s1.step();
                  StepRecord copy = s1.trace().back();
                  std::lock_guard<std::mutex> lk(mu_);
                  auto& t1 = snap_.sessions[1].trace;
                  t1.push(std::move(copy));
                  snap_.sessions[1].finish_reason = s1.finish_reason();
                  const auto& a0 = snap_.sessions[0].trace.steps();
                  const std::size_t i = t1.steps().size() - 1;
                  snap_.logit_max_diff.resize(i + 1, std::numeric_limits<double>::quiet_NaN());
                  if (i < a0.size())
                      snap_.logit_max_diff[i] = max_logit_difference(a0[i], t1.back());
                  snap_.busy_done = k + 1;
              }
          }});
}

void EngineWorker::set_prompt(const std::string& text) {
    post({tr("setting the prompt"), tr_later("the prompt was not used"), [this, text] {
              // Every session or none: a prompt one session refuses leaves them all as they were.
              for (auto& l : live_) l->session->set_prompt(text);
              prompt_ = text;
              publish_sessions(true);
          }});
}

void EngineWorker::set_trace_budget(std::size_t bytes) {
    post(
        {tr("setting the trace budget"), tr_later("could not set the trace budget"), [this, bytes] {
             view_budget_ = bytes;
             std::lock_guard<std::mutex> lk(mu_);
             for (auto& v : snap_.sessions) v.trace.set_budget(bytes);
         }});
}

void EngineWorker::set_timing_runs(int runs) {
    post({tr("setting how steps are timed"), tr_later("could not set how steps are timed"),
          [this, runs] {
              timing_.runs = runs;
              for (auto& l : live_) l->session->set_timing(timing_);
          }});
}

void EngineWorker::set_sampler(const SamplerConfig& s) {
    post({tr("setting the sampler"), tr_later("could not set the sampler"), [this, s] {
              sampler_ = s;
              for (auto& l : live_) l->session->set_sampler(s);
              publish_sessions(false);
          }});
}

void EngineWorker::reset() {
    post({tr("reset"), tr_later("could not reset"), [this] {
              for (auto& l : live_) l->session->reset();
              publish_sessions(true);
          }});
}

void EngineWorker::prefill() {
    post({tr("prefill"), tr_later("the prefill did not run"), [this] {
              if (live_.empty()) throw Error("no model is open");
              if (prefilled()) return;
              {
                  std::lock_guard<std::mutex> lk(mu_);
                  snap_.busy_total = 1;
              }
              step_all();
          }});
}

void EngineWorker::decode(int n) {
#ifdef __EMSCRIPTEN__
    // The page has no worker thread (web/README: no SharedArrayBuffer on a static host): a run
    // of steps is one request per step, so the main loop draws frames between them
    // (run_pending) and the page never freezes; cancel() drops the steps not yet run.
    if (n > 1) {
        for (int k = 0; k < n; ++k) decode(1);
        return;
    }
#endif
    char what[96];
    if (n == 1)
        std::snprintf(what, sizeof what, "%s", tr("decode step"));
    else
        std::snprintf(what, sizeof what, tr("decoding %d steps"), n);
    post({what, tr_later("the step did not run"), [this, n] {
              if (live_.empty()) throw Error("no model is open");
              const int total = n + (prefilled() ? 0 : 1);
              {
                  std::lock_guard<std::mutex> lk(mu_);
                  snap_.busy_total = total;
              }
              for (int k = 0; k < total && !cancel_; ++k) {
                  bool all_done = true;
                  for (auto& l : live_) all_done = all_done && l->session->finished();
                  if (all_done) break;
                  step_all();
                  std::lock_guard<std::mutex> lk(mu_);
                  snap_.busy_done = k + 1;
              }
          }});
}

void EngineWorker::play_lesson(std::shared_ptr<const Lesson> lesson, int number, int step) {
    char what[96];
    std::snprintf(what, sizeof what, tr("lesson %d, step %d"), number, step + 1);
    Job job{what, tr_later("the lesson step did not run"),
            [this, lesson, number, step] { lesson_->play(*lesson, number, step); }};
    job.lesson = true;
    post(std::move(job));
}

}  // namespace kvs::gui
