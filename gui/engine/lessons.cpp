// A lesson played on the live sessions (through the one SessionLessonTarget over the worker's
// Workbench), each step's outcome published; the worker is the target's observer (@show,
// @highlight, @explain, @model).
#include "gui/engine/engine_worker.h"

#include "core/util/error.h"

namespace kvs::gui {

void EngineWorker::play_lesson(std::shared_ptr<const Lesson> lesson, int number, int step) {
    post(
        {EngineTask::LessonStep, {}, number, step + 1},
        [this, lesson, number, step] { play(*lesson, number, step); }, true);
}

void EngineWorker::publish_lesson(const std::vector<StepOutcome>* outcomes, int target,
                                  bool cancelled) {
    const LessonFacts f = lesson_.facts();
    std::lock_guard<std::mutex> lk(mu_);
    LessonRun& r = snap_.lesson;
    r.number = lesson_number_;
    if (outcomes) r.outcomes = *outcomes;
    r.target = target;
    r.cancelled = cancelled;
    r.batch = lesson_.last_batch();
    r.scale = lesson_.last_scale();
    r.gpu = lesson_.last_gpu();
    const auto& serve = lesson_.shown_serve();
    r.serve = serve ? std::shared_ptr<const ServePlan>(serve, &serve->plan) : nullptr;
    r.serve_steps = serve ? serve->run.shown_steps_run : 0;
    r.layer = f.highlight_layer;
    r.head = f.highlight_head;
    r.highlight_serial = highlight_serial_;
    r.explain_layer = f.explain_layer;
    r.explain_head = f.explain_head;
    r.explain_q_pos = explain_q_pos_;
    r.explain_serial = explain_serial_;
    r.explain_step = explain_step_;
    r.panel = lesson_panel_;
    ++r.serial;
}

void EngineWorker::play(const Lesson& lesson, int number, int step) {
    const bool next = number == lesson_number_ && step > 0 && lesson_played_ == step - 1;
    std::vector<StepOutcome> outcomes;
    if (next) {
        std::lock_guard<std::mutex> lk(mu_);
        outcomes = snap_.lesson.outcomes;
        outcomes.resize(static_cast<std::size_t>(step));
    }
    lesson_number_ = number;
    lesson_played_ = -1;  // until the step has run to its end
    end_replay();         // a lesson runs on live sessions
    publish_lesson(&outcomes, step, false);
    try {
        if (!next) {
            lesson_.restart();
            explain_q_pos_ = -1;
            explain_step_ = -1;
        }
        for (int k = next ? step : 0; k <= step; ++k) {
            check_cancel();
            playing_step_ = k;
            lesson_panel_.clear();  // @show points at a panel for the step that says so
            outcomes.push_back(play_step(lesson, k, lesson_));
            const bool stop = outcomes.back().error;
            publish_lesson(&outcomes, k < step && !stop ? step : -1, false);
            if (stop) return;  // a step that failed leaves the sessions half way: replay next
        }
        lesson_played_ = step;
    } catch (const Cancelled&) {
        publish_lesson(nullptr, -1, true);
        throw;
    }
}

void EngineWorker::model_loaded(const std::string& spec) {
    std::lock_guard<std::mutex> lk(mu_);
    snap_.model_spec = spec;
    snap_.model_note.clear();
}

void EngineWorker::shown(const std::string& panel) {
    lesson_panel_ = panel;
}

void EngineWorker::highlighted(int, int) {
    ++highlight_serial_;
}

void EngineWorker::explained(int, int, int q_pos) {
    explain_q_pos_ = q_pos;
    explain_step_ = playing_step_;
    ++highlight_serial_;
    ++explain_serial_;
}

}  // namespace kvs::gui
