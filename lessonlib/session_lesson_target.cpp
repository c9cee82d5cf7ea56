#include "lessonlib/session_lesson_target.h"

#include "core/error.h"
#include "core/model_loader.h"

namespace kvs {

void SessionLessonTarget::restart() {
    model_ = nullptr;
    prompt_.clear();
    limit_ = -1;
    cache_ = CacheView::On;
    session_.reset();
    uncached_.reset();
    batch_.reset();
    scale_.reset();
    layer_ = head_ = 0;
    explain_layer_ = explain_head_ = explain_row_ = -1;
    panel_.clear();
}

const Model& SessionLessonTarget::model() const {
    if (!model_) throw Error("no model loaded yet (@model comes first)");
    return *model_;
}

void SessionLessonTarget::load_model(const std::string& spec) {
    auto it = models_.find(spec);
    if (it == models_.end()) it = models_.emplace(spec, open_model(spec)).first;
    model_ = it->second.get();
    // A prompt belongs to a vocabulary: the new model starts without one.
    prompt_.clear();
    session_.reset();
    uncached_.reset();
    layer_ = head_ = 0;
}

void SessionLessonTarget::require_unstarted(const char* what) const {
    if (session_ && session_->prefilled())
        throw Error(std::string(what) + " must come before @prefill (or after @reset)");
}

void SessionLessonTarget::rebuild_sessions() {
    session_.reset();
    uncached_.reset();
    if (!model_ || prompt_.empty()) return;
    SessionConfig cfg;
    cfg.max_new_tokens = limit_;
    cfg.timing = timing_;
    cfg.mode = cache_ == CacheView::Off ? CacheMode::Uncached : CacheMode::Cached;
    auto s = std::make_unique<Session>(*model_, backend_, cfg);
    s->set_prompt(prompt_);
    if (cache_ == CacheView::Compare) {
        cfg.mode = CacheMode::Uncached;
        uncached_ = std::make_unique<Session>(*model_, backend_, cfg);
        uncached_->set_prompt(prompt_);
    }
    session_ = std::move(s);
}

void SessionLessonTarget::set_prompt(const std::string& text) {
    model();
    const std::string saved = prompt_;
    prompt_ = text;
    try {
        rebuild_sessions();
    } catch (...) {
        prompt_ = saved;
        rebuild_sessions();
        throw;
    }
}

void SessionLessonTarget::set_limit(int max_new_tokens) {
    require_unstarted("@limit");
    const int saved = limit_;
    limit_ = max_new_tokens;
    try {
        rebuild_sessions();
    } catch (...) {
        limit_ = saved;
        rebuild_sessions();
        throw;
    }
}

void SessionLessonTarget::set_cache(CacheView mode) {
    if (mode == cache_) return;
    if (mode == CacheView::Compare) {
        // The twin must see the same steps from the start.
        require_unstarted("@cache compare");
        cache_ = mode;
        rebuild_sessions();
        return;
    }
    // On and off switch the running session from its next step on; a twin is dropped.
    cache_ = mode;
    uncached_.reset();
    if (session_)
        session_->set_mode(mode == CacheView::Off ? CacheMode::Uncached : CacheMode::Cached);
}

void SessionLessonTarget::prefill() {
    model();
    require_prompt_before_prefill(session_ != nullptr, session_ && session_->prefilled());
    session_->step();
    if (uncached_) uncached_->step();
}

void SessionLessonTarget::decode(int n) {
    require_prefill_before_decode(session_ && session_->prefilled());
    for (int i = 0; (n < 0 || i < n) && !session_->finished(); ++i) {
        session_->step();
        if (uncached_ && !uncached_->finished()) uncached_->step();
    }
}

void SessionLessonTarget::reset() {
    if (session_) session_->reset();
    if (uncached_) uncached_->reset();
}

void SessionLessonTarget::highlight(int layer, int head) {
    require_layer_and_head(model().config(), layer, head);
    layer_ = layer;
    head_ = head;
}

void SessionLessonTarget::explain(int layer, int head, int row) {
    explain_row_ = require_explainable(session_.get(), layer, head, row);
    layer_ = explain_layer_ = layer;
    head_ = explain_head_ = head;
}

void SessionLessonTarget::batch(const BatchPlan& plan) {
    batch_ = measure_batches(model(), backend_, plan);
}

void SessionLessonTarget::scale(const ScaleQuery& query) {
    scale_ = scale_report(query);
}

LessonFacts SessionLessonTarget::facts() const {
    LessonFacts f;
    f.model = model_;
    f.session = session_.get();
    f.uncached = uncached_.get();
    f.cache = cache_;
    f.batch = batch_ ? &*batch_ : nullptr;
    f.scale = scale_ ? &*scale_ : nullptr;
    f.highlight_layer = layer_;
    f.highlight_head = head_;
    f.explain_layer = explain_layer_;
    f.explain_head = explain_head_;
    f.explain_row = explain_row_;
    return f;
}

}  // namespace kvs
