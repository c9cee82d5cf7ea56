#include "gui/engine_lesson_target.h"

#include "core/error.h"
#include "core/model_loader.h"

namespace kvs::gui {
namespace {}  // namespace

void EngineWorker::LessonDriver::publish(const std::vector<StepOutcome>* outcomes, int target,
                                         bool cancelled) {
    std::lock_guard<std::mutex> lk(w_.mu_);
    LessonRun& r = w_.snap_.lesson;
    r.number = number_;
    if (outcomes) r.outcomes = *outcomes;
    r.target = target;
    r.cancelled = cancelled;
    r.batch = batch_;
    r.scale = scale_;
    r.layer = layer_;
    r.head = head_;
    r.highlight_serial = highlight_serial_;
    r.explain_layer = explain_layer_;
    r.explain_head = explain_head_;
    r.explain_row = explain_q_pos_;
    r.explain_serial = explain_serial_;
    r.panel = panel_;
    ++r.serial;
}

void EngineWorker::LessonDriver::play(const Lesson& lesson, int number, int step) {
    const bool next = number == number_ && step > 0 && played_ == step - 1;
    std::vector<StepOutcome> outcomes;
    if (next) {
        std::lock_guard<std::mutex> lk(w_.mu_);
        outcomes = w_.snap_.lesson.outcomes;
        outcomes.resize(static_cast<std::size_t>(step));
    }
    number_ = number;
    played_ = -1;  // until the step has run to its end
    publish(&outcomes, step, false);
    try {
        if (!next) restart();
        for (int k = next ? step : 0; k <= step; ++k) {
            w_.check_cancel();
            panel_.clear();  // @show points at a panel for the step that says so
            outcomes.push_back(play_step(lesson, k, *this));
            const bool stop = outcomes.back().error;
            publish(&outcomes, k < step && !stop ? step : -1, false);
            if (stop) return;  // a step that failed leaves the sessions half way: replay next
        }
        played_ = step;
    } catch (const Cancelled&) {
        publish(nullptr, -1, true);
        throw;
    }
}

const Model& EngineWorker::LessonDriver::model() const {
    if (!loaded_ || !w_.model_) throw Error("no model loaded yet (@model comes first)");
    return *w_.model_;
}

bool EngineWorker::LessonDriver::has_session() const {
    return loaded_ && !w_.prompt_.empty() && !w_.live_.empty() &&
           w_.live_[0]->session->prompt_len() > 0;
}

void EngineWorker::LessonDriver::require_unstarted(const char* what) const {
    if (w_.prefilled())
        throw Error(std::string(what) + " must come before @prefill (or after @reset)");
}

void EngineWorker::LessonDriver::restart() {
    loaded_ = false;
    w_.limit_ = -1;
    // Lessons are written for greedy decoding and check earlier steps, so their sessions use
    // the default sampler and keep every step's payload (within the default trace budget).
    w_.sampler_ = SamplerConfig();
    w_.trace_budget_ = Trace::kDefaultBudget;
    batch_.reset();
    scale_.reset();
    layer_ = head_ = 0;
    explain_layer_ = explain_head_ = explain_row_ = explain_q_pos_ = -1;
    panel_.clear();
    w_.drop_twin();
    w_.cache_ = CacheView::On;
    for (auto& l : w_.live_) {
        l->session->set_mode(CacheMode::Cached);
        l->session->set_sampler(w_.sampler_);
    }
    w_.publish_sessions(false);
}

void EngineWorker::LessonDriver::load_model(const std::string& spec) {
    auto it = models_.find(spec);
    if (it == models_.end()) it = models_.emplace(spec, kvs::open_model(spec)).first;
    w_.live_.clear();
    w_.model_ = it->second;
    // A prompt belongs to a vocabulary: the new model starts without one.
    w_.prompt_.clear();
    loaded_ = true;
    layer_ = head_ = 0;
    {
        std::lock_guard<std::mutex> lk(w_.mu_);
        w_.snap_.model_spec = spec;
        w_.snap_.model_note.clear();
    }
    w_.rebuild_sessions();
}

void EngineWorker::LessonDriver::rebuild_or_restore(const std::function<void()>& restore) {
    try {
        w_.rebuild_sessions();
    } catch (...) {
        restore();
        w_.rebuild_sessions();  // what was there before, which built
        throw;
    }
}

void EngineWorker::LessonDriver::set_prompt(const std::string& text) {
    model();
    if (!w_.live_.empty()) {
        // Session::set_prompt changes nothing when it refuses a prompt, so a word the model
        // does not know leaves the sessions (and what they computed) as they were.
        for (auto& l : w_.live_) l->session->set_prompt(text);
        w_.prompt_ = text;
        w_.publish_sessions(true);
        return;
    }
    const std::string saved = w_.prompt_;
    w_.prompt_ = text;
    rebuild_or_restore([&] { w_.prompt_ = saved; });
}

void EngineWorker::LessonDriver::set_limit(int max_new_tokens) {
    model();
    require_unstarted("@limit");
    const int saved = w_.limit_;
    w_.limit_ = max_new_tokens;
    rebuild_or_restore([&] { w_.limit_ = saved; });
}

void EngineWorker::LessonDriver::set_cache(CacheView mode) {
    const CacheView c = mode;
    if (c == w_.cache_) return;
    if (c == CacheView::Compare) {
        // The twin must see the same steps from the start.
        require_unstarted("@cache compare");
        w_.cache_ = c;
        if (w_.model_) w_.rebuild_sessions();
        return;
    }
    // On and off switch the running session from its next step on; a twin is dropped.
    w_.cache_ = c;
    w_.drop_twin();
    if (!w_.live_.empty())
        w_.live_[0]->session->set_mode(c == CacheView::Off ? CacheMode::Uncached
                                                           : CacheMode::Cached);
    w_.publish_sessions(false);
}

void EngineWorker::LessonDriver::prefill() {
    model();
    require_prompt_before_prefill(has_session(), has_session() && w_.prefilled());
    w_.step_all();
}

void EngineWorker::LessonDriver::decode(int n) {
    require_prefill_before_decode(has_session() && w_.prefilled());
    Session& s = *w_.live_[0]->session;
    for (int i = 0; (n < 0 || i < n) && !s.finished(); ++i) {
        w_.check_cancel();
        w_.step_all();
    }
}

void EngineWorker::LessonDriver::reset() {
    for (auto& l : w_.live_) l->session->reset();
    w_.publish_sessions(true);
}

void EngineWorker::LessonDriver::highlight(int layer, int head) {
    require_layer_and_head(model().config(), layer, head);
    layer_ = layer;
    head_ = head;
    ++highlight_serial_;
}

void EngineWorker::LessonDriver::explain(int layer, int head, int row) {
    const Session* s = has_session() ? w_.live_[0]->session.get() : nullptr;
    explain_row_ = require_explainable(s, layer, head, row);
    explain_q_pos_ = s->trace().back().attention.q_pos0 + explain_row_;
    layer_ = explain_layer_ = layer;
    head_ = explain_head_ = head;
    ++highlight_serial_;
    ++explain_serial_;
}

void EngineWorker::LessonDriver::batch(const BatchPlan& plan) {
    const Model& m = model();
    // The sessions' backend when there is one (so the sweep runs where the lesson does).
    BackendChoice own;
    Backend* be = nullptr;
    if (!w_.live_.empty()) {
        be = w_.live_[0]->backend.backend.get();
    } else {
        own = make_backend(w_.backend_name_, w_.cpu_threads_);
        be = own.backend.get();
    }
    batch_ = std::make_shared<const BatchTable>(
        measure_batches(m, *be, plan, [this] { w_.check_cancel(); }));
}

void EngineWorker::LessonDriver::scale(const ScaleQuery& query) {
    scale_ = std::make_shared<const ScaleReport>(scale_report(query));
}

LessonFacts EngineWorker::LessonDriver::facts() const {
    LessonFacts f;
    f.model = loaded_ ? w_.model_.get() : nullptr;
    if (has_session()) {
        f.session = w_.live_[0]->session.get();
        if (w_.live_.size() > 1) f.uncached = w_.live_[1]->session.get();
    }
    f.cache = w_.cache_;
    f.batch = batch_.get();
    f.scale = scale_.get();
    f.highlight_layer = layer_;
    f.highlight_head = head_;
    f.explain_layer = explain_layer_;
    f.explain_head = explain_head_;
    f.explain_row = explain_row_;
    return f;
}

}  // namespace kvs::gui
