// The lesson player: directives become target calls in order, checks are counted, an error
// stops the step with FILE:LINE, and replays start from a clean target. Then the headless
// target on the toy model, end to end.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/backend_factory.h"
#include "lessonlib/lesson_ask.h"
#include "lessonlib/lesson_metrics.h"
#include "lessonlib/lesson_parser.h"
#include "lessonlib/lesson_player.h"
#include "lessonlib/lesson_serve.h"
#include "lessonlib/session_lesson_target.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

// Records what the player asked for; facts() has no model or session.
class RecordingTarget : public LessonTarget {
  public:
    std::vector<std::string> calls;
    std::string fail_on;  // a call that throws kvs::Error

    void note(const std::string& c) {
        calls.push_back(c);
        if (c == fail_on) throw Error("refused " + c);
    }
    void restart() override { note("restart"); }
    void load_model(const std::string& s) override { note("model " + s); }
    void set_prompt(const std::string& t) override { note("prompt " + t); }
    void set_limit(int n) override { note("limit " + std::to_string(n)); }
    void set_cache(CacheView m) override {
        note(std::string("cache ") + (m == CacheView::On    ? "on"
                                      : m == CacheView::Off ? "off"
                                                            : "compare"));
    }
    void prefill() override { note("prefill"); }
    void decode(int n) override { note("decode " + std::to_string(n)); }
    void reset() override { note("reset"); }
    void highlight(int l, int h) override {
        note("highlight " + std::to_string(l) + " " + std::to_string(h));
    }
    void show(const std::string& p) override { note("show " + p); }
    void batch(const BatchPlan& p) override { note("batch " + std::to_string(p.sizes.size())); }
    void scale(const ScaleQuery& q) override { note("scale " + q.model); }
    LessonFacts facts() const override { return {}; }
};

const char* kActions = R"(# Actions
## One
@cache off
@highlight layer=1 head=2
@show kv
## Two
@decode 2
@decode all
@reset
@limit 7
@cache compare
@batch sizes=1,2 prompts="a"
@scale model=llama2-7b gpu=h100-sxm
)";

}  // namespace

TEST_CASE("the player turns directives into target calls, in order", "[lesson]") {
    const Lesson l = parse_lesson(kActions, "actions.md");
    RecordingTarget t;
    const auto all = replay_to(l, 1, t);
    REQUIRE(all.size() == 2);
    CHECK(all[0].ok());
    CHECK(all[1].ok());
    CHECK(t.calls == std::vector<std::string>{"restart", "cache off", "highlight 1 2", "show kv",
                                              "decode 2", "decode -1", "reset", "limit 7",
                                              "cache compare", "batch 2", "scale llama2-7b"});
    // Back/Next replays from a restart; playing step 0 alone calls only its directives.
    t.calls.clear();
    replay_to(l, 0, t);
    CHECK(t.calls == std::vector<std::string>{"restart", "cache off", "highlight 1 2", "show kv"});
    CHECK_THROWS_WITH(play_step(l, 2, t), "actions.md: no step 3 (the lesson has 2)");
}

TEST_CASE("an error stops the step with the file and line, later steps are not played",
          "[lesson]") {
    const Lesson l = parse_lesson(kActions, "actions.md");
    RecordingTarget t;
    t.fail_on = "decode -1";
    const auto all = replay_to(l, 1, t);
    REQUIRE(all.size() == 2);
    CHECK(all[1].error);
    CHECK_FALSE(all[1].ok());
    const auto& last = all[1].log.back();
    CHECK(last.kind == LessonLogEntry::Kind::Error);
    CHECK(last.lines.at(0) == "actions.md:8: @decode all: refused decode -1");
    CHECK(t.calls.back() == "decode -1");  // @reset and the rest were skipped
}

TEST_CASE("checks that cannot be read fail, the step goes on", "[lesson]") {
    const Lesson l =
        parse_lesson("# C\n## S\n@expect rows == 1\n@show kv\n@expect 1 + 1 == 2\n", "checks.md");
    RecordingTarget t;
    const auto o = play_step(l, 0, t);
    CHECK(o.checks == 2);
    CHECK(o.failed == 1);
    CHECK_FALSE(o.error);
    CHECK(o.log.at(0).lines.at(0) == "rows needs a prompt");
    CHECK(o.log.at(2).pass);
    CHECK(t.calls == std::vector<std::string>{"show kv"});
}

// The toy model through the headless target: the real engine, the tutorial's numbers.
TEST_CASE("a toy lesson runs on the headless target", "[lesson][toy]") {
    const Lesson l = parse_lesson(R"(# Toy
## Prefill
@model toy
@prompt Today weather is so
@prefill
@expect head(0, 0, 1) == none
@expect head(0, 3, 3) == 31/3 within 1e-6
@expect token == "nice"
@expect logit("nice") > logit("delicious")
@expect rows == 4
@expect kv_len == 4
## Decode
@decode 1
@expect rows == 1
@expect keys == 5
@expect kv_growth == 1
@expect token == "and"
@expect token == "warm"
## Compare
@reset
@cache compare
@prefill
@decode all
@expect finish == "end token"
@expect text == " nice and warm"
@expect generated == 4
@expect max_logit_diff == 0
@expect uncached_rows == kv_len
@expect same_tokens == 1
)",
                                  "toy.md");
    BackendChoice be = make_backend("cpu");
    SessionLessonTarget t(*be.backend);
    auto all = replay_to(l, 1, t);
    REQUIRE(all.size() == 2);
    CHECK(all[0].ok());
    CHECK(all[0].checks == 6);
    // The second step's last check is wrong on purpose: the toy says "and" after "nice".
    CHECK(all[1].checks == 5);
    CHECK(all[1].failed == 1);
    CHECK(all[1].log.back().lines.at(0) == "got \"and\" against \"warm\"");
    REQUIRE(t.facts().session);
    CHECK(t.facts().session->trace().steps().size() == 2);

    // Back to step 0 (a replay from a clean target), then on to the comparison.
    all = replay_to(l, 0, t);
    CHECK(all.back().ok());
    CHECK(t.facts().session->trace().steps().size() == 1);
    all = replay_to(l, 2, t);
    REQUIRE(all.size() == 3);
    std::string log;
    for (const auto& e : all[2].log)
        log += e.directive + ": " + (e.lines.empty() ? "" : e.lines[0]) + "\n";
    INFO(log);
    CHECK(all[2].ok());
    CHECK(all[2].checks == 6);
    REQUIRE(t.facts().uncached);
    CHECK(t.facts().uncached->trace().steps().size() == 4);

    // @cache compare after @prefill is an error that names the line.
    const Lesson late = parse_lesson(
        "# E\n## S\n@model toy\n@prompt Today weather is so\n@prefill\n@cache compare\n",
        "late.md");
    const auto o = replay_to(late, 0, t).at(0);
    CHECK(o.error);
    CHECK(o.log.back().lines.at(0) ==
          "late.md:6: @cache compare: @cache compare must come before @prefill (or after @reset)");
}

TEST_CASE("@explain opens one attention row of the latest step, or says why not", "[lesson]") {
    BackendChoice be = make_backend("cpu");
    SessionLessonTarget t(*be.backend);
    const Lesson early = parse_lesson(
        "# X\n## Before\n@model toy\n@prompt Today weather is so\n@explain 0 0 4\n", "explain.md");
    const Lesson l = parse_lesson(R"(# X
## Before
@model toy
@prompt Today weather is so
## After
@prefill
@explain 0 0 last
@expect score(0, 0, 4, 1) == -inf
@expect score(0, 0, 4, 2) == 0
@expect softmax_error(0, 0, 4) <= 1e-6
@expect output_error(0, 0, 4) == 0
@expect query_rows_computed == 4
@expect kv_recomputed_delta == none
## Bad row
@explain 0 0 5
)",
                                  "explain.md");
    auto all = replay_to(early, 0, t);
    CHECK(all[0].error);
    CHECK(all[0].log.back().lines.at(0) ==
          "explain.md:5: @explain 0 0 4: @explain needs @prefill first");
    all = replay_to(l, 2, t);
    REQUIRE(all.size() == 3);
    CHECK(all[1].ok());
    CHECK(all[1].checks == 6);
    CHECK(t.facts().explain_q_pos == 3);  // "last": the prefill's newest row, position 4
    bool shown = false;
    for (const auto& line : all[1].log.at(1).lines)
        shown |= line.find("weight 0.5") != std::string::npos;
    CHECK(shown);
    CHECK(all[2].error);
    CHECK(all[2].log.back().lines.at(0).find(
              "step 0 holds the queries at positions 1..4, not position 5") != std::string::npos);
    CHECK(t.facts().explain_q_pos == 3);  // a failed @explain leaves the last one

    // A target without its own explain() gets the default: checked, then highlighted.
    RecordingTarget r;
    CHECK_THROWS_WITH(r.explain(0, 0, 0), "@explain needs @prefill first");
}

TEST_CASE("a failed check on measured times is not judged where times mean nothing, counts are",
          "[lesson]") {
    const Lesson l = parse_lesson(R"(# T
## S
@model toy
@prompt Today weather is so
@cache compare
@prefill
@expect time(0) > 1000
@expect uncached_time(0) < 0
@expect rows == 999
@expect time(0) > 0
)",
                                  "times.md");
    BackendChoice be = make_backend("cpu");
    SessionLessonTarget t(*be.backend);
    t.restart();
    // A build whose times mean something (the plain one): every failed check counts.
    auto o = play_step(l, 0, t, PlayOptions{true});
    CHECK(o.checks == 4);
    CHECK(o.failed == 3);
    for (const auto& e : o.log) CHECK(e.judged);
    // A sanitizer build's times: the two failed time checks are logged, not counted; the failed
    // count is; a time check that holds is a pass either way.
    t.restart();
    o = play_step(l, 0, t, PlayOptions{false});
    CHECK(o.checks == 4);
    CHECK(o.failed == 1);
    int not_judged = 0;
    for (const auto& e : o.log)
        if (!e.judged) {
            ++not_judged;
            CHECK_FALSE(e.pass);
            CHECK(e.lines.back().find("not judged") == 0);
        }
    CHECK(not_judged == 2);
    CHECK(o.log.back().pass);
}

TEST_CASE("a figure read by name is a measured time when it names one: serve's throughput",
          "[lesson]") {
    CHECK(is_timed_lesson_metric("serve", {LessonValue::string("tokens_per_second")}));
    CHECK(is_timed_lesson_metric("serve", {LessonValue::string("alone_tokens_per_second")}));
    CHECK_FALSE(is_timed_lesson_metric("serve", {LessonValue::string("peak_blocks")}));
    CHECK_FALSE(is_timed_lesson_metric("serve"));
    // Every figure whose meaning says it is measured is marked a time, and only those.
    for (const ServeField& f : serve_fields())
        CHECK(f.timed == (std::string(f.help).find("measured") != std::string::npos));
    // Played where times mean nothing, a failed throughput check is logged and not counted; a
    // failed count is.
    const Lesson l = parse_lesson(R"(# T
## S
@model default
@serve new=4 block=4 sharing=off prompts="Once upon a time" | "One day Tom went to the park"
@expect serve("tokens_per_second") > serve("alone_tokens_per_second") * 1000
@expect serve("requests") == 3
)",
                                  "serve-times.md");
    BackendChoice be = make_backend("cpu");
    SessionLessonTarget t(*be.backend);
    t.restart();
    auto o = play_step(l, 0, t, PlayOptions{false});
    CHECK(o.checks == 2);
    CHECK(o.failed == 1);
    REQUIRE(o.log.size() >= 2);
    CHECK_FALSE(o.log[o.log.size() - 2].judged);
    CHECK(o.log.back().judged);
    t.restart();
    o = play_step(l, 0, t, PlayOptions{true});
    CHECK(o.failed == 2);
}

TEST_CASE("@ask reads the engine's answer where it stands and says which choice it is",
          "[lesson][ask]") {
    const Lesson l = parse_lesson(R"(# A
## Prefill
@model toy
@prompt Today weather is so
@prefill
@ask token choices="warm" | "nice" | "delicious"
@question Which word?
@why The highest logit.
@expect token == "nice"
## Decode
@decode 1
@ask head(0, 3, 5) within=0.01
@question The all head at "nice"?
@why (10 + 20 + 1 + 5 + 8) / 5.
@expect head(0, 3, 5) == 8.8 within 1e-6
## Wrong choices
@ask rows choices=4 | 5
@question Rows?
@why On purpose: the engine's answer, 1, is none of them.
@expect rows == 1
## Yes
@ask keys > rows choices=yes | no
@question More keys than rows?
@why Five keys, one row.
@expect keys > rows
)",
                                  "ask.md");
    BackendChoice be = make_backend("cpu");
    SessionLessonTarget t(*be.backend);
    const auto all = replay_to(l, 3, t);
    REQUIRE(all.size() == 4);
    const auto ask_of = [](const StepOutcome& o) {
        for (const auto& e : o.log)
            if (e.kind == LessonLogEntry::Kind::Ask) return e;
        return LessonLogEntry{};
    };
    // A choice: the engine's token, which is choice 2; the question and why come along.
    const LessonLogEntry a = ask_of(all[0]);
    REQUIRE(a.kind == LessonLogEntry::Kind::Ask);
    CHECK(a.pass);
    CHECK(a.answer.str == "nice");
    CHECK(a.choice == 1);
    CHECK(a.words == "Which word?");
    CHECK(a.lines.front() == "the engine's answer: \"nice\"");
    CHECK(a.lines.back() == "why: The highest logit.");
    CHECK(all[0].ok());
    CHECK(all[0].checks == 2);  // the @ask and the @expect
    // A typed number: read after the decode step it follows.
    const LessonLogEntry b = ask_of(all[1]);
    CHECK(b.pass);
    CHECK(b.answer.num == Approx(8.8));
    CHECK(learner_is_right(l.steps[1].ask()->ask, b.answer, LearnerAnswer{-1, true, 8.8}));
    CHECK(learner_is_right(l.steps[1].ask()->ask, b.answer, LearnerAnswer{-1, true, 8.81}));
    CHECK_FALSE(learner_is_right(l.steps[1].ask()->ask, b.answer, LearnerAnswer{-1, true, 8.9}));
    CHECK_FALSE(learner_is_right(l.steps[1].ask()->ask, b.answer, LearnerAnswer{}));
    // An answer printed as a denormal, infinite or not a number is judged without throwing.
    for (double v : {1e-320, HUGE_VAL, -HUGE_VAL, std::nan("")})
        CHECK_NOTHROW(learner_is_right(l.steps[1].ask()->ask, LessonValue::number(v),
                                       LearnerAnswer{-1, true, 1}));
    // An answer that is none of the choices fails as a check.
    const LessonLogEntry c = ask_of(all[2]);
    CHECK_FALSE(c.pass);
    CHECK(c.choice == -1);
    CHECK(all[2].failed == 1);
    CHECK(c.lines.at(1) == "none of the choices");
    // A comparison is answered yes (1) or no (0), said in the reader's words.
    const LessonLogEntry y = ask_of(all[3]);
    CHECK(y.pass);
    CHECK(y.answer.num == 1);
    CHECK(ask_answer_words(l.steps[3].ask()->ask, y.answer, ReportLang::En) == "yes");
    CHECK(ask_answer_words(l.steps[3].ask()->ask, y.answer, ReportLang::Zh) == "\xE6\x98\xAF");
    CHECK(learner_is_right(l.steps[3].ask()->ask, y.answer, LearnerAnswer{0, false, 0}));
    CHECK_FALSE(learner_is_right(l.steps[3].ask()->ask, y.answer, LearnerAnswer{1, false, 0}));
}

TEST_CASE("A learner's answer is read as the window's --answer and the terminal's prompt take it",
          "[lesson][ask]") {
    const AskSpec three = parse_ask("rows choices=1 | 4 | 5");
    LearnerAnswer l;
    CHECK(learner_answer_from(three, "2", l));
    CHECK(l.choice == 1);
    CHECK_FALSE(l.typed);
    CHECK(learner_answer_from(three, " 3 ", l));  // spaces around it, as typed
    CHECK(l.choice == 2);
    // Neither a key of a choice nor anything else: refused, the answer so far untouched.
    for (const char* bad : {"", "0", "4", "1.5", "-1", "x", "1x", "inf", "nan", "1e999"}) {
        CAPTURE(bad);
        CHECK_FALSE(learner_answer_from(three, bad, l));
        CHECK(l.choice == 2);
    }
    CHECK(ask_answer_hint(three, ReportLang::En) == "a choice from 1 to 3");
    CHECK(ask_answer_hint(three, ReportLang::Zh) ==
          "1 \xE5\x88\xB0 3 "
          "\xE4\xB9\x8B\xE9\x97\xB4\xE7\x9A\x84"
          "\xE4\xB8\x80\xE4\xB8\xAA\xE9\x80\x89"
          "\xE9\xA1\xB9");  // 1 到 3 之间的一个选项
    CHECK(learner_answer_words(three, l, ReportLang::En) == "5");
    // A typed number: any finite number, its words as typed.
    const AskSpec typed = parse_ask("head(0, 3, 2) within=0.01");
    LearnerAnswer n;
    CHECK(learner_answer_from(typed, "-10.25", n));
    CHECK(n.typed);
    CHECK(n.number == -10.25);
    CHECK(learner_answer_words(typed, n, ReportLang::En) == "-10.25");
    CHECK_FALSE(learner_answer_from(typed, "ten", n));
    CHECK(ask_answer_hint(typed, ReportLang::En) == "a number");
    // None given: no words; the verdicts in both languages.
    CHECK(learner_answer_words(typed, LearnerAnswer{}, ReportLang::En).empty());
    const AskSpec yes_no = parse_ask("keys > rows choices=yes | no");
    LearnerAnswer y;
    CHECK(learner_answer_from(yes_no, "2", y));
    CHECK(learner_answer_words(yes_no, y, ReportLang::En) == "no");
    CHECK(std::string(ask_verdict_words(true, ReportLang::En)) == "you predicted it");
    CHECK(std::string(ask_verdict_words(false, ReportLang::En)) == "not what you predicted");
    CHECK(std::string(ask_verdict_words(true, ReportLang::Zh)) ==
          "\xE4\xBD\xA0\xE7\x8C\x9C\xE5\xAF\xB9\xE4\xBA\x86");  // 你猜对了
}

TEST_CASE("kvscope-cli lesson prints each question with the engine's answer after its step",
          "[lesson][ask][cli]") {
    const auto dir = test::temp_dir("lesson-ask");
    const std::string text =
        "# A\n## Prefill\n@model toy\n@prompt Today weather is so\n@prefill\n"
        "@ask finish choices=\"end token\" | \"running\"\n@question Finished yet?\n"
        "@why One step in, it is still writing.\n@expect finish == \"running\"\n";
    test::write_file(dir / "ask.md", std::vector<unsigned char>(text.begin(), text.end()));
    auto r = test::run_cli({"lesson", (dir / "ask.md").string(), "--backend", "cpu", "--quiet"});
    CHECK(r.exit_code == 0);
    const auto q = r.out.find("QUESTION  Finished yet?");
    REQUIRE(q != std::string::npos);
    CHECK(r.out.find("PASS  @expect finish") < q);  // after the step's own lines
    CHECK(r.out.find("1) the end token  2) still running", q) != std::string::npos);
    CHECK(r.out.find("the engine's answer: still running", q) != std::string::npos);
    CHECK(r.out.find("why: One step in, it is still writing.", q) != std::string::npos);
    // In Chinese: the choices and the answer in Chinese, never the English values quoted.
    r = test::run_cli({"lesson", (dir / "ask.md").string(), "--backend", "cpu", "--lang", "zh"});
    CHECK(r.out.find("\xE5\xBC\x95\xE6\x93\x8E\xE7\x9A\x84\xE7\xAD\x94\xE6\xA1\x88\xEF\xBC\x9A"
                     "\xE4\xBB\x8D\xE5\x9C\xA8\xE7\x94\x9F\xE6\x88\x90") !=
          std::string::npos);  // 引擎的答案：仍在生成
    // The check's two sides too: 左边 仍在生成, not 左边 "running".
    CHECK(r.out.find("\xE5\xB7\xA6\xE8\xBE\xB9 \xE4\xBB\x8D\xE5\x9C\xA8") != std::string::npos);
    CHECK(r.out.find("\xE5\xB7\xA6\xE8\xBE\xB9 \"running\"") == std::string::npos);
}

TEST_CASE("bidirectional_ reads the session without the causal mask, and only in that view",
          "[lesson]") {
    // In the compare view the twin is a cached model's uncached copy, not one without the mask:
    // bidirectional_ is refused there with the reason; uncached_ reads it.
    const Lesson l = parse_lesson(R"(# T
## S
@model toy
@prompt Today weather is so
@cache compare
@prefill
@expect bidirectional_rows == 4
@expect uncached_rows == 4
)",
                                  "twin.md");
    BackendChoice be = make_backend("cpu");
    SessionLessonTarget t(*be.backend);
    t.restart();
    const auto o = play_step(l, 0, t);
    CHECK(o.checks == 2);
    CHECK(o.failed == 1);
    REQUIRE(o.log.size() >= 2);
    const auto& refused = o.log[o.log.size() - 2];
    CHECK(refused.directive == "expect bidirectional_rows == 4");
    REQUIRE_FALSE(refused.lines.empty());
    CHECK(refused.lines[0].find("bidirectional_rows needs @cache bidirectional") !=
          std::string::npos);
    CHECK(o.log.back().lines.at(0).find("left 4, right 4") != std::string::npos);
}

TEST_CASE("@serve runs the scheduler on the lesson's model, or says why not", "[lesson]") {
    BackendChoice be = make_backend("cpu");
    SessionLessonTarget t(*be.backend);
    // serve() before any @serve, then a @serve on the toy, which has no batched forward pass.
    const Lesson bad = parse_lesson(
        "# X\n## S\n@model toy\n@expect serve(\"steps\") == 1\n@serve prompts=\"Today\"\n",
        "serve.md");
    const auto o = replay_to(bad, 0, t).at(0);
    CHECK(o.failed == 1);
    CHECK(o.error);
    std::string log;
    for (const auto& e : o.log)
        for (const auto& line : e.lines) log += line + "\n";
    INFO(log);
    CHECK(log.find("serve() needs a @serve first") != std::string::npos);
    CHECK(log.find("serve.md:5: @serve prompts=\"Today\": toy has no batched forward pass") !=
          std::string::npos);
    // The default model: a block size beyond its context is refused with the scheduler's reason;
    // a run's figures are read by name, an unknown one refused.
    const Lesson l = parse_lesson(
        "# X\n## S\n@model default\n@serve new=3 batch=1 prompts=\"One day\" | \"One day Tom\"\n"
        "@expect serve(\"requests\") == 2\n@expect serve(\"queued\") == 1\n"
        "@expect serve(\"same_as_alone\") == 2\n@expect serve(\"peak_running\") == 1\n"
        "@expect serve(\"colour\") == 1\n"
        "@expect serve_block(1, 1) >= 0\n@expect serve_block(1, 99) == 0\n"
        "## T\n@serve block=1000 prompts=\"One day\"\n",
        "serve2.md");
    const auto all = replay_to(l, 1, t);
    CHECK(all.at(0).checks == 7);
    CHECK(all.at(0).failed == 2);  // the unknown figure, a position the request does not hold
    std::string first;
    for (const auto& e : all.at(0).log)
        for (const auto& line : e.lines) first += line + "\n";
    INFO(first);
    CHECK(first.find("request 1 holds positions 1 to ") != std::string::npos);
    // The block tables at the step the run is shown at, a line a request.
    CHECK(first.find("block tables after step ") != std::string::npos);
    CHECK(first.find("\n  request 1: [") != std::string::npos);
    REQUIRE(t.facts().serve == nullptr);  // the failed @serve left none
    CHECK(all.at(1).error);
    CHECK(all.at(1).log.back().lines.at(0).find("block size 1000") != std::string::npos);
}
