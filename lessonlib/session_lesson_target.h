#pragma once
// The headless LessonTarget: real Sessions on a real backend, no window. kvscope-cli lesson runs
// lessons on it; a GUI may drive one on its worker thread and draw facts().session's trace.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/session.h"
#include "lessonlib/batch_sweep.h"
#include "lessonlib/lesson_target.h"
#include "lessonlib/scale_accounting.h"

namespace kvs {

class SessionLessonTarget : public LessonTarget {
  public:
    explicit SessionLessonTarget(Backend& backend) : backend_(backend) {}

    void restart() override;
    void load_model(const std::string& spec) override;
    void set_prompt(const std::string& text) override;
    void set_limit(int max_new_tokens) override;
    void set_cache(CacheView mode) override;
    void prefill() override;
    void decode(int n) override;
    void reset() override;
    void highlight(int layer, int head) override;
    void explain(int layer, int head, int row) override;
    void show(const std::string& panel) override { panel_ = panel; }
    void batch(const BatchPlan& plan) override;
    void scale(const ScaleQuery& query) override;
    LessonFacts facts() const override;

    const std::string& panel() const { return panel_; }
    // How the sessions time their steps (core/step_timing.h), from the next session on.
    void set_timing(const TimingPolicy& t) { timing_ = t; }

  private:
    const Model& model() const;
    void rebuild_sessions();  // after a change of model, prompt, limit or cache mode
    void require_unstarted(const char* what) const;

    Backend& backend_;
    std::map<std::string, std::unique_ptr<Model>> models_;  // kept across restarts
    const Model* model_ = nullptr;
    std::string prompt_;
    int limit_ = -1;
    CacheView cache_ = CacheView::On;
    std::unique_ptr<Session> session_, uncached_;
    std::optional<BatchTable> batch_;
    std::optional<ScaleReport> scale_;
    int layer_ = 0, head_ = 0;
    int explain_layer_ = -1, explain_head_ = -1, explain_row_ = -1;
    std::string panel_;
    TimingPolicy timing_;
};

}  // namespace kvs
