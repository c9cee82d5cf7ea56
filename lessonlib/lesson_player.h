#pragma once
// Plays lesson steps on a LessonTarget. The player keeps no state between calls: step k is
// played by play_step on a target that has played steps 0..k-1, and Back/Next in a GUI replay
// from the start (replay_to), so every step is reproducible from the file alone.
#include <string>
#include <vector>

#include "lessonlib/lesson.h"
#include "lessonlib/lesson_target.h"

namespace kvs {

struct LessonLogEntry {
    // Ask: an @ask's answer, read from the engine where the @ask stands; it holds (pass) when the
    // answer could be read and is one of the choices (a number, when there are none).
    enum class Kind { Action, Check, Ask, Error };
    Kind kind = Kind::Action;
    int line = 0;                    // of the directive in the lesson file
    std::string directive;           // as written, without '@'
    bool pass = true;                // checks: whether it held; errors: false
    std::vector<std::string> lines;  // what happened, with the numbers it produced
    std::string words;               // checks: the check as a sentence, in the lesson's language
    bool judged = true;  // checks: counted; false for a check on measured times that did not
                         // hold in a build whose times do not mean anything (PlayOptions)
    LessonValue answer;  // Ask: the engine's answer (none when it could not be read)
    int choice = -1;     // Ask: which of the choices it is (0-based), -1: none or no choices
};

// Whether checks that read a measured time are judged. Not in a sanitizer build: there the
// instrumentation is most of every time (5-10x), so a ratio of two times says more about it and
// about the machine than about the model (a lesson 5 check of two prefill medians failed once so
// in the clean-clone CI). A failed check on times is then logged with judged = false and not
// counted; checks on counts are judged everywhere.
struct PlayOptions {
    bool judge_times = kTimesMeaningful;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    static constexpr bool kTimesMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    static constexpr bool kTimesMeaningful = false;
#else
    static constexpr bool kTimesMeaningful = true;
#endif
#else
    static constexpr bool kTimesMeaningful = true;
#endif
};

struct StepOutcome {
    int step = 0;
    std::vector<LessonLogEntry> log;
    int checks = 0;      // @expect lines and @ask answers
    int failed = 0;      // checks that did not hold
    bool error = false;  // a directive could not run; the rest of the step was skipped
    bool ok() const { return failed == 0 && !error; }
};

// Runs every directive of lesson.steps[step] in order. Directive errors (kvs::Error from the
// target) end the step and are logged as "FILE:LINE: @directive: why"; failed checks do not.
StepOutcome play_step(const Lesson& lesson, int step, LessonTarget& target,
                      const PlayOptions& options = {});

// target.restart(), then steps 0..step; one outcome per step played. Stops after a step with
// an error.
std::vector<StepOutcome> replay_to(const Lesson& lesson, int step, LessonTarget& target);

}  // namespace kvs
