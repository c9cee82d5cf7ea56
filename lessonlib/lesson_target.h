#pragma once
// What a lesson acts on. The player (lessonlib/lesson_player.h) turns directives into these calls
// and then reads LessonFacts to report numbers and check @expect lines, so an implementation only
// has to act. There is one implementation, lessonlib/session_lesson_target.h, over a Workbench:
// kvscope-cli lesson runs it headless, the window on its worker thread with a LessonObserver
// (lessonlib/lesson_observer.h). Calls come from one thread at a time. Errors a lesson can cause
// are kvs::Error.
#include <string>

#include "lessonlib/lesson.h"

namespace kvs {

class Model;
struct ModelConfig;
class Session;
struct BatchTable;
struct ScaleReport;
struct GpuStepView;
struct LessonServe;

// Everything the player may read after an action. Pointers are null when there is no such thing
// yet (no model loaded, no @batch run, ...); they stay valid until the next call on the target.
struct LessonFacts {
    const Model* model = nullptr;
    const Session* session = nullptr;   // the session the lesson drives (its cache mode per @cache)
    const Session* uncached = nullptr;  // @cache compare: the same prompt run without the cache
    CacheView cache = CacheView::On;
    const BatchTable* batch = nullptr;   // the last @batch
    const ScaleReport* scale = nullptr;  // the last @scale
    const GpuStepView* gpu = nullptr;    // the last @gpu
    const LessonServe* serve = nullptr;  // the last @serve
    int highlight_layer = 0;
    int highlight_head = 0;
    // The last @explain (-1: none): layer, head and the query's token index (position - 1) at
    // the session's latest step.
    int explain_layer = -1, explain_head = -1, explain_q_pos = -1;
};

class LessonTarget {
  public:
    virtual ~LessonTarget() = default;
    // Forget the lesson's state (prompt, sessions, results): the start of a replay. Loaded models
    // may be kept for speed.
    virtual void restart() = 0;
    virtual void load_model(const std::string& spec) = 0;  // open_model() names or a path
    virtual void set_prompt(const std::string& text) = 0;
    virtual void set_limit(int max_new_tokens) = 0;  // before @prefill
    virtual void set_cache(CacheView mode) = 0;      // compare: before @prefill
    virtual void prefill() = 0;
    virtual void decode(int n) = 0;  // n steps, or until finished when n < 0; stops when finished
    virtual void reset() = 0;        // back to the prompt
    virtual void highlight(int layer, int head) = 0;
    // @explain: the inside of one attention row of the latest step
    // (core/session/attention_explain.h). The default checks the row can be explained and
    // highlights its layer and head, so a target without the panel still plays the lesson; a target
    // with one opens it.
    // `position`: the query's position (from 1), -1 the step's newest row.
    virtual void explain(int layer, int head, int position);
    virtual void show(const std::string& panel) = 0;
    virtual void batch(const BatchPlan& plan) = 0;
    virtual void scale(const ScaleQuery& query) = 0;
    // @gpu: the loaded model's decode step as a CUDA device runs it (core/session/gpu_step_view.h):
    // the kernel launches counted, its time measured where a device answers. The default says that
    // this target cannot.
    virtual void gpu();
    // @serve: the plan's prompts through the serving scheduler on the loaded model
    // (lessonlib/lesson_serve.h). The default says that this target cannot.
    virtual void serve(const ServePlan& plan);
    virtual LessonFacts facts() const = 0;
};

// The preconditions of the session directives, shared by every LessonTarget so that a lesson
// fails with the same message headless and in the window. Each throws kvs::Error.
void require_prompt_before_prefill(bool has_prompt, bool prefilled);     // @prefill
void require_prefill_before_decode(bool prefilled);                      // @decode
void require_layer_and_head(const ModelConfig& c, int layer, int head);  // @highlight
// @explain: a prefilled session whose latest step can be broken down at (layer, head) for the
// query at `position` (from 1; -1: the step's newest row); returns the query's token index.
int require_explainable(const Session* s, int layer, int head, int position);

}  // namespace kvs
