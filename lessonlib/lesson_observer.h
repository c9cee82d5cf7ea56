#pragma once
// What a window hears from the lesson target (lessonlib/session_lesson_target.h) as a lesson
// plays: the directives about the view (@show, @highlight, @explain, @model), and a chance to
// stop a long directive. The target does the engine work; an observer only shows it, so there
// is one target, headless or in the window. Called on the thread that plays the lesson.
#include <string>

namespace kvs {

class LessonObserver {
  public:
    virtual ~LessonObserver() = default;
    virtual void model_loaded(const std::string& spec) { (void)spec; }
    virtual void shown(const std::string& panel) { (void)panel; }
    virtual void highlighted(int layer, int head) {
        (void)layer;
        (void)head;
    }
    // @explain: the row's query position in the sequence (the step's first query + row).
    virtual void explained(int layer, int head, int q_pos) {
        (void)layer;
        (void)head;
        (void)q_pos;
    }
    // Before each decode step and each forward pass of a @batch: throw to stop the directive
    // (the window's cancel). The state stays whole: the steps before it stand.
    virtual void check_cancel() {}
};

}  // namespace kvs
