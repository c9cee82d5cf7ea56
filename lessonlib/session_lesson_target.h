#pragma once
// The LessonTarget: lessons act on a Workbench (core/session/workbench.h), real Sessions on a real
// backend. kvscope-cli lesson runs it headless over its own workbench; the window runs it on its
// worker thread over the worker's workbench, so a lesson's steps happen in the panels the
// student watches, and listens through a LessonObserver for what concerns the view.
#include <map>
#include <memory>
#include <string>

#include "core/session/gpu_step_view.h"
#include "core/session/workbench.h"
#include "lessonlib/batch_sweep.h"
#include "lessonlib/lesson_observer.h"
#include "lessonlib/lesson_serve.h"
#include "lessonlib/lesson_target.h"
#include "lessonlib/scale_accounting.h"

namespace kvs {

class SessionLessonTarget : public LessonTarget {
  public:
    // Headless: a workbench of its own on `backend`.
    explicit SessionLessonTarget(Backend& backend);
    // Over someone else's workbench (the window's), telling `observer` (may be null).
    SessionLessonTarget(Workbench& bench, LessonObserver* observer);
    ~SessionLessonTarget() override;

    void restart() override;
    void load_model(const std::string& spec) override;
    void set_prompt(const std::string& text) override;
    void set_limit(int max_new_tokens) override;
    void set_cache(CacheView mode) override;
    void prefill() override;
    void decode(int n) override;
    void reset() override;
    void highlight(int layer, int head) override;
    void explain(int layer, int head, int position) override;
    void show(const std::string& panel) override;
    void batch(const BatchPlan& plan) override;
    void scale(const ScaleQuery& query) override;
    void gpu() override;
    void serve(const ServePlan& plan) override;
    LessonFacts facts() const override;

    const std::string& panel() const { return panel_; }
    // The last @batch and @scale, shared with whoever shows them (null: none since restart).
    const std::shared_ptr<const BatchTable>& last_batch() const { return batch_; }
    const std::shared_ptr<const ScaleReport>& last_scale() const { return scale_; }
    const std::shared_ptr<const GpuStepView>& last_gpu() const { return gpu_; }
    // The @serve the window's Serving view shows: the one its step names (ServePlan::shown).
    const std::shared_ptr<const LessonServe>& shown_serve() const { return shown_serve_; }
    // What @gpu runs (kernels/gpu_step_probe.h: the front end links the backends; lessonlib
    // does not). Without one, @gpu fails with a reason.
    void set_gpu_probe(GpuProbe probe) { gpu_probe_ = std::move(probe); }
    // How the sessions time their steps (core/session/step_timing.h), from the next step on.
    void set_timing(const TimingPolicy& t) { bench_.set_timing(t); }

  private:
    const Model& model() const;  // throws when no @model ran since the restart
    bool has_prompt() const;     // a @prompt the sessions hold, since the last @model
    void require_unstarted(const char* what) const;

    std::unique_ptr<Workbench> own_;  // headless only
    Workbench& bench_;
    LessonObserver* observer_ = nullptr;
    LessonObserver quiet_;                                        // when nobody listens
    std::map<std::string, std::shared_ptr<const Model>> models_;  // kept across restarts
    bool loaded_ = false;                                         // a @model since the restart
    std::shared_ptr<const BatchTable> batch_;
    std::shared_ptr<const ScaleReport> scale_;
    std::shared_ptr<const GpuStepView> gpu_;
    std::shared_ptr<const LessonServe> serve_, shown_serve_;
    GpuProbe gpu_probe_;
    int layer_ = 0, head_ = 0;
    int explain_layer_ = -1, explain_head_ = -1, explain_q_pos_ = -1;
    std::string panel_;
};

}  // namespace kvs
