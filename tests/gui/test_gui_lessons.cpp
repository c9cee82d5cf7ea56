// Lessons in the window, without a display: EngineWorker::play_lesson plays steps on the
// worker's own workbench through the one LessonTarget (lessonlib/session_lesson_target.h). Next
// builds on the steps played, Back and any other request replay from the start; errors say where.
#include <catch2/catch.hpp>

#include "gui/engine/engine_worker.h"
#include "gui/state/lesson_catalog.h"
#include "lessonlib/lesson_parser.h"
#include "lessonlib/lesson_player.h"

using namespace kvs;
using namespace kvs::gui;

namespace {

LessonRun lesson_run(const EngineWorker& w) {
    auto lock = w.lock();
    return w.snapshot().lesson;
}

int trace_steps(const EngineWorker& w) {
    auto lock = w.lock();
    return w.snapshot().steps();
}

void play(EngineWorker& w, const std::shared_ptr<const Lesson>& l, int number, int step) {
    w.play_lesson(l, number, step);
    w.wait_idle();
}

std::shared_ptr<const Lesson> lesson_text(const std::string& text) {
    return std::make_shared<const Lesson>(parse_lesson(text, "test.md"));
}

}  // namespace

TEST_CASE("Next plays on from the steps before, Back and other requests replay from the start",
          "[gui][lessons][worker]") {
    LessonCatalog cat;
    cat.load();
    const auto l1 = cat.lesson(1, Lang::En);  // the toy: step 2 prefills, step 3 points at a head
    REQUIRE(l1);
    EngineWorker w;
    SamplerConfig hot;
    hot.temperature = 1.0f;
    w.set_sampler(hot);  // lessons decode greedily whatever the window had
    play(w, l1, 1, 0);
    LessonRun run = lesson_run(w);
    REQUIRE(run.outcomes.size() == 1);
    CHECK(run.outcomes[0].ok());
    CHECK(run.panel == "tokens");
    CHECK(trace_steps(w) == 0);
    {
        auto lock = w.lock();
        REQUIRE(w.snapshot().model);
        CHECK(w.snapshot().model->is_toy());
        CHECK(w.snapshot().prompt == "Today weather is so");
        CHECK(w.snapshot().sampler.temperature == 0.0f);
    }
    play(w, l1, 1, 1);  // Next: the prefill, on top of step 1
    run = lesson_run(w);
    REQUIRE(run.outcomes.size() == 2);
    CHECK(run.outcomes[1].ok());
    CHECK(run.outcomes[1].checks == 18);  // 17 @expect lines and the @ask's answer
    CHECK(trace_steps(w) == 1);
    const auto serial = run.highlight_serial;
    play(w, l1, 1, 2);  // Next: @highlight layer=0 head=0, @show attention
    run = lesson_run(w);
    REQUIRE(run.outcomes.size() == 3);
    CHECK(run.outcomes[2].ok());
    CHECK(run.panel == "attention");
    CHECK(run.highlight_serial > serial);
    CHECK(run.layer == 0);
    CHECK(run.head == 0);
    CHECK(trace_steps(w) == 1);

    // A step by hand changes the sessions under the lesson: its next step replays from the start
    // (played on top, the decode step would still be in the trace).
    w.decode(1);
    w.wait_idle();
    CHECK(trace_steps(w) == 2);
    play(w, l1, 1, 3);
    run = lesson_run(w);
    REQUIRE(run.outcomes.size() == 4);
    for (const auto& o : run.outcomes) CHECK(o.ok());
    CHECK(trace_steps(w) == 1);

    // Back: steps 1 and 2 again, from the start.
    play(w, l1, 1, 1);
    run = lesson_run(w);
    REQUIRE(run.outcomes.size() == 2);
    CHECK(run.outcomes[1].ok());
    CHECK(trace_steps(w) == 1);

    // Another lesson's step 2 is not "next": lesson 3 starts over on its own model.
    const auto l3 = cat.lesson(3, Lang::Zh);
    REQUIRE(l3);
    play(w, l3, 3, 1);
    run = lesson_run(w);
    CHECK(run.number == 3);
    REQUIRE(run.outcomes.size() == 2);
    for (const auto& o : run.outcomes) CHECK(o.ok());
}

TEST_CASE("a lesson step that cannot run says where, and leaves the last good state",
          "[gui][lessons][worker]") {
    EngineWorker w;
    const auto bad = lesson_text(
        "# Broken\n\n## One\n\n@model toy\n@prompt Today weather is so\n@prefill\n"
        "@expect token == \"nice\"\n\n## Two\n\n@prompt Tomorrow is so\n@decode 1\n");
    play(w, bad, 50, 1);
    const LessonRun run = lesson_run(w);
    REQUIRE(run.outcomes.size() == 2);
    CHECK(run.outcomes[0].ok());
    CHECK(run.outcomes[1].error);
    const LessonLogEntry& e = run.outcomes[1].log.back();
    CHECK(e.kind == LessonLogEntry::Kind::Error);
    REQUIRE(!e.lines.empty());
    CHECK(e.lines[0].rfind("test.md:12: @prompt Tomorrow is so: ", 0) == 0);
    auto lock = w.lock();
    // The toy refused the word; its prompt and prefill stand.
    CHECK(w.snapshot().prompt == "Today weather is so");
    CHECK(w.snapshot().steps() == 1);
    CHECK(w.snapshot().error.empty());  // a lesson's errors are in its outcomes
}

TEST_CASE("a lesson request cancelled before its end leaves the worker usable",
          "[gui][lessons][worker]") {
    EngineWorker w;
    const auto l = lesson_text(
        "# Long\n\n## One\n\n@model default\n@prompt Once upon a time\n@prefill\n@decode all\n"
        "@expect finish != \"running\"\n");
    for (int i = 0; i < 3; ++i) {
        w.play_lesson(l, 60, 0);
        w.cancel();  // whether the step had started, finished or not: it stops or never runs
        w.wait_idle();
    }
    play(w, l, 60, 0);
    const LessonRun run = lesson_run(w);
    CHECK_FALSE(run.cancelled);
    REQUIRE(run.outcomes.size() == 1);
    CHECK(run.outcomes[0].ok());
}
