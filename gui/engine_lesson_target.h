#pragma once
// The LessonTarget the window plays lessons on: the engine worker's own sessions, so a lesson's
// steps happen in the panels the student is watching, on the worker thread, and the student can
// go on stepping by hand from where a lesson step left off. It mirrors core's headless
// SessionLessonTarget (same errors, same rules for @limit and @cache compare) and reaches into
// the worker's state, so only engine_worker.cpp uses it.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "gui/engine_worker.h"
#include "lessonlib/lesson_target.h"

namespace kvs::gui {

class EngineWorker::LessonDriver final : public LessonTarget {
  public:
    explicit LessonDriver(EngineWorker& w) : w_(w) {}

    // Worker thread: plays step `step` of lesson `number`, publishing each outcome.
    void play(const Lesson& lesson, int number, int step);
    // The sessions changed under the lesson: its next step replays from the start.
    void lose_place() { played_ = -1; }

    void restart() override;
    void load_model(const std::string& spec) override;
    void set_prompt(const std::string& text) override;
    void set_limit(int max_new_tokens) override;
    void set_cache(CacheView mode) override;
    void prefill() override;
    void decode(int n) override;
    void reset() override;
    void highlight(int layer, int head) override;
    void show(const std::string& panel) override { panel_ = panel; }
    void batch(const BatchPlan& plan) override;
    void scale(const ScaleQuery& query) override;
    LessonFacts facts() const override;

  private:
    const Model& model() const;  // throws when no @model ran since the restart
    bool has_session() const;
    void require_unstarted(const char* what) const;
    void rebuild_or_restore(const std::function<void()>& restore);
    // Copies the results into the snapshot; `outcomes` replaces the published ones when set.
    void publish(const std::vector<StepOutcome>* outcomes, int target, bool cancelled);

    EngineWorker& w_;
    std::map<std::string, std::shared_ptr<Model>> models_;  // kept across replays
    bool loaded_ = false;                                   // a @model ran since the restart
    int number_ = 0;   // the lesson whose steps the sessions hold
    int played_ = -1;  // its last step played on them; -1: replay before the next step
    std::shared_ptr<const BatchTable> batch_;
    std::shared_ptr<const ScaleReport> scale_;
    int layer_ = 0, head_ = 0;
    std::uint64_t highlight_serial_ = 0;
    std::string panel_;
};

}  // namespace kvs::gui
