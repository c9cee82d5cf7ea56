#include "lessonlib/session_lesson_target.h"

#include "core/loaders/model_loader.h"
#include "core/util/error.h"

namespace kvs {

namespace {
// A lesson's sessions: every query row an uncached step computed is kept, so @explain and the
// checks can open each row its why-not-Q count names.
SessionConfig lesson_sessions() {
    SessionConfig c;
    c.keep_every_query_row = true;
    return c;
}
}  // namespace

SessionLessonTarget::SessionLessonTarget(Backend& backend)
    : own_(std::make_unique<Workbench>(backend, lesson_sessions())),
      bench_(*own_),
      observer_(&quiet_) {}

SessionLessonTarget::SessionLessonTarget(Workbench& bench, LessonObserver* observer)
    : bench_(bench), observer_(observer ? observer : &quiet_) {}

SessionLessonTarget::~SessionLessonTarget() = default;

void SessionLessonTarget::restart() {
    loaded_ = false;
    // Lessons are written for greedy decoding, the cache on and no limit, and check earlier
    // steps: whatever the workbench had (the window's sampler), they start from the defaults.
    bench_.set_view(CacheView::On);
    bench_.set_limit(-1);
    bench_.set_sampler(SamplerConfig());
    bench_.set_trace_budget(Trace::kDefaultBudget);
    batch_.reset();
    scale_.reset();
    gpu_.reset();
    serve_.reset();
    shown_serve_.reset();
    layer_ = head_ = 0;
    explain_layer_ = explain_head_ = explain_q_pos_ = -1;
    panel_.clear();
}

const Model& SessionLessonTarget::model() const {
    if (!loaded_ || !bench_.model()) throw Error("no model loaded yet (@model comes first)");
    return *bench_.model();
}

bool SessionLessonTarget::has_prompt() const {
    return loaded_ && !bench_.prompt().empty() && bench_.sessions() > 0 &&
           bench_.session(0).prompt_len() > 0;
}

void SessionLessonTarget::load_model(const std::string& spec) {
    auto it = models_.find(spec);
    if (it == models_.end()) it = models_.emplace(spec, open_model(spec)).first;
    // A prompt belongs to a vocabulary: the new model starts without one.
    bench_.open(it->second, {});
    loaded_ = true;
    layer_ = head_ = 0;
    observer_->model_loaded(spec);
}

void SessionLessonTarget::require_unstarted(const char* what) const {
    if (loaded_ && bench_.prefilled())
        throw Error(std::string(what) + " must come before @prefill (or after @reset)");
}

void SessionLessonTarget::set_prompt(const std::string& text) {
    model();
    bench_.set_prompt(text);  // a prompt the model refuses changes nothing
}

void SessionLessonTarget::set_limit(int max_new_tokens) {
    require_unstarted("@limit");
    bench_.set_limit(max_new_tokens);
}

void SessionLessonTarget::set_cache(CacheView mode) {
    if (mode == bench_.view()) return;
    // The twin must see the same steps from the start. On and off switch the running session
    // from its next step on; a twin is dropped.
    if (mode == CacheView::Compare) require_unstarted("@cache compare");
    bench_.set_view(mode);
}

void SessionLessonTarget::prefill() {
    model();
    require_prompt_before_prefill(has_prompt(), has_prompt() && bench_.prefilled());
    bench_.step();
}

void SessionLessonTarget::decode(int n) {
    require_prefill_before_decode(has_prompt() && bench_.prefilled());
    for (int i = 0; (n < 0 || i < n) && !bench_.session(0).finished(); ++i) {
        observer_->check_cancel();
        bench_.step();
    }
}

void SessionLessonTarget::reset() {
    bench_.reset();
}

void SessionLessonTarget::highlight(int layer, int head) {
    require_layer_and_head(model().config(), layer, head);
    layer_ = layer;
    head_ = head;
    observer_->highlighted(layer, head);
}

void SessionLessonTarget::explain(int layer, int head, int position) {
    const Session* s = has_prompt() ? &bench_.session(0) : nullptr;
    explain_q_pos_ = require_explainable(s, layer, head, position);
    layer_ = explain_layer_ = layer;
    head_ = explain_head_ = head;
    observer_->explained(layer, head, explain_q_pos_);
}

void SessionLessonTarget::show(const std::string& panel) {
    panel_ = panel;
    observer_->shown(panel);
}

void SessionLessonTarget::batch(const BatchPlan& plan) {
    // On the sessions' backend, so the sweep runs where the lesson does.
    batch_ = std::make_shared<const BatchTable>(
        measure_batches(model(), bench_.backend(0), plan, [this] { observer_->check_cancel(); }));
}

void SessionLessonTarget::scale(const ScaleQuery& query) {
    // model=loaded: the shapes of the model the lesson runs (checked against its context here).
    scale_ = std::make_shared<const ScaleReport>(
        query.model == kLoadedModel
            ? scale_report(query, scale_model_of(model().name(), model().config()))
            : scale_report(query));
}

void SessionLessonTarget::gpu() {
    if (!gpu_probe_) LessonTarget::gpu();
    model();
    if (!has_prompt()) throw Error("@gpu needs a @prompt (its tokens are the prefill counted)");
    const Session& s = bench_.session(0);
    const std::vector<int> prompt(s.tokens().begin(), s.tokens().begin() + s.prompt_len());
    gpu_ = std::make_shared<const GpuStepView>(gpu_probe_(model(), prompt));
}

void SessionLessonTarget::serve(const ServePlan& plan) {
    // On the sessions' backend, like @batch. A @serve that fails leaves no figures of an
    // earlier one to be read as its own.
    serve_.reset();
    serve_ =
        std::make_shared<const LessonServe>(run_lesson_serve(model(), bench_.backend(0), plan));
    if (plan.shown) shown_serve_ = serve_;
}

LessonFacts SessionLessonTarget::facts() const {
    LessonFacts f;
    f.model = loaded_ ? bench_.model() : nullptr;
    if (has_prompt()) {
        f.session = &bench_.session(0);
        f.uncached = bench_.twin();
    }
    f.cache = bench_.view();
    f.batch = batch_.get();
    f.scale = scale_.get();
    f.gpu = gpu_.get();
    f.serve = serve_.get();
    f.highlight_layer = layer_;
    f.highlight_head = head_;
    f.explain_layer = explain_layer_;
    f.explain_head = explain_head_;
    f.explain_q_pos = explain_q_pos_;
    return f;
}

}  // namespace kvs
