// The Serving view's run on the engine's worker thread: a Scheduler (core/serving/scheduler.h)
// over the open model with the view's prompts queued, stepped on request, each step's pool and
// requests copied into a ServeShot and published in the snapshot. The window reads only those
// shots; nothing here draws.
#include <algorithm>
#include <memory>
#include <mutex>

#include "core/serving/prompt_file.h"
#include "core/serving/serve_trace.h"
#include "core/util/error.h"
#include "gui/engine/engine_worker.h"
#include "kernels/cpu/cpu_backend.h"

namespace kvs::gui {

// The view shows one row per request in its tables and timeline: a file with more prompts is
// kvscope-cli serve's to run.
constexpr int kMaxServeRequests = 64;

struct ServingJob {
    std::shared_ptr<const Model> model;
    CpuBackend backend{false};  // its own: the sessions' backend may be a GPU's
    std::unique_ptr<Scheduler> scheduler;
    std::shared_ptr<const ServeTrace> trace;  // the newest published
};

void EngineWorker::publish_serving() {
    auto t = std::make_shared<ServeTrace>(*serve_->trace);
    const Scheduler& s = *serve_->scheduler;
    t->stats = s.stats();
    t->finished = s.finished();
    t->shots.push_back(std::make_shared<const ServeShot>(serve_shot(s)));
    serve_->trace = t;
    std::lock_guard<std::mutex> lk(mu_);
    snap_.serving = t;
    snap_.serving_model = serve_->model;
}

void EngineWorker::serve_open(const ServeSetup& setup) {
    post({EngineTask::ServeOpen, setup.prompts_file}, [this, setup] {
        // Why it could not start stays with the Serving view (the notice under the toolbar
        // goes after a while): the panel says it, and a step asked for later repeats it.
        try {
            serve_start(setup);
        } catch (const Error& e) {
            serve_.reset();
            std::lock_guard<std::mutex> lk(mu_);
            snap_.serving.reset();
            snap_.serving_model.reset();
            snap_.serving_error = e.what();
            throw;
        }
        std::lock_guard<std::mutex> lk(mu_);
        snap_.serving_error.clear();
    });
}

void EngineWorker::serve_start(const ServeSetup& setup) {
    {
        refuse_in_replay("a recorded run cannot serve requests (open a model to run them)");
        std::shared_ptr<const Model> model;
        {
            std::lock_guard<std::mutex> lk(mu_);
            model = snap_.model;
        }
        if (!model) throw Error("no model is open");
        std::vector<PromptLine> prompts;
        for (const std::string& p : setup.prompts) prompts.push_back({p, 0});
        if (prompts.empty())
            prompts = setup.prompts_file.empty() ? builtin_serve_prompts()
                                                 : read_prompt_file(setup.prompts_file);
        if (static_cast<int>(prompts.size()) > kMaxServeRequests)
            throw Error(setup.prompts_file + ": " + std::to_string(prompts.size()) +
                        " prompts; the Serving view shows at most " +
                        std::to_string(kMaxServeRequests) + " (kvscope-cli serve runs more)");
        std::vector<std::vector<int>> tokens;
        for (const PromptLine& p : prompts) tokens.push_back(model->tokenizer().encode(p.text));
        // The pool: the view's size, or what the longest request needs when that is more (0:
        // the scheduler's, the batch limit's contexts' worth, as a lesson's @serve has it).
        ServeConfig cfg = setup.config;
        const int ctx = model->config().seq_len, bs = std::max(1, cfg.block_size);
        for (const auto& t : tokens) {
            if (cfg.pool_blocks == 0) break;
            const int rows = std::min(static_cast<int>(t.size()) + cfg.max_new_tokens - 1, ctx);
            cfg.pool_blocks = std::max(cfg.pool_blocks, (rows + bs - 1) / bs);
        }
        auto run = std::make_shared<ServingJob>();
        run->model = model;
        run->scheduler = std::make_unique<Scheduler>(*model, run->backend, cfg);
        for (std::size_t i = 0; i < tokens.size(); ++i)
            run->scheduler->submit(std::move(tokens[i]), prompts[i].arrival);
        auto trace = std::make_shared<ServeTrace>();
        trace->config = run->scheduler->config();
        trace->context = ctx;
        for (const PromptLine& p : prompts) trace->prompts.push_back(p.text);
        run->trace = trace;
        serve_ = run;
        publish_serving();  // the queue before the first step
    }
}

void EngineWorker::serve_step(int n) {
#ifdef __EMSCRIPTEN__
    // The page has no worker thread: one request per step, frames between them (as decode).
    if (n > 1) {
        for (int k = 0; k < n; ++k) serve_step(1);
        return;
    }
#endif
    post({EngineTask::ServeStep, {}, n}, [this, n] {
        if (!serve_) {
            std::lock_guard<std::mutex> lk(mu_);
            throw Error(snap_.serving_error.empty()
                            ? std::string("no serving run is open")
                            : "no serving run is open: it could not start: " + snap_.serving_error);
        }
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_total = n;
        }
        for (int k = 0; k < n && !cancel_ && !serve_->scheduler->finished(); ++k) {
            serve_->scheduler->step();
            publish_serving();
            std::lock_guard<std::mutex> lk(mu_);
            snap_.busy_done = k + 1;
        }
    });
}

}  // namespace kvs::gui
