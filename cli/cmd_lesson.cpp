#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "cli/lesson_prompt.h"
#include "core/util/error.h"
#include "core/util/utf8.h"
#include "kernels/gpu_step_probe.h"
#include "lessonlib/engine_messages.h"
#include "lessonlib/lesson.h"
#include "lessonlib/lesson_ask.h"
#include "lessonlib/lesson_files.h"
#include "lessonlib/lesson_metrics.h"
#include "lessonlib/lesson_player.h"
#include "lessonlib/session_lesson_target.h"

namespace kvs::cli {
namespace {

void print_list() {
    const std::string dir = lessons_dir();
    std::printf("lessons in %s\n", dir.empty() ? "(not found)" : dir.c_str());
    const auto en = list_lessons("en");
    const auto zh = list_lessons("zh");
    for (const auto& f : en) {
        std::string zh_title = "-";
        for (const auto& z : zh)
            if (z.number == f.number) zh_title = load_lesson(z.path).title;
        std::printf("  %2d  %-24s %s | %s\n", f.number, escape_for_one_line(f.name).c_str(),
                    escape_for_one_line(load_lesson(f.path).title).c_str(),
                    escape_for_one_line(zh_title).c_str());
    }
}

void print_metrics() {
    std::puts("@expect reads these (step metrics take an optional step index, -1 = latest;");
    std::puts("prefix a session metric with uncached_ for the twin of @cache compare, or with");
    std::puts("bidirectional_ for the session without the causal mask of @cache bidirectional):");
    for (const auto& m : lesson_metrics()) {
        const std::string call =
            std::string(m.name) + (m.max_args ? std::string("(") + m.args + ")" : "");
        std::printf("  %-34s %s\n", call.c_str(), m.help);
    }
}

}  // namespace

std::vector<OptionSpec> lesson_options() {
    return {{.name = "lesson",
             .value_name = "FILE|N",
             .help = "the lesson: its file, or its number in lessons/LANG/",
             .hidden = true},  // given as the one word: kvscope-cli lesson 5
            {.name = "lang",
             .value_name = "L",
             .help = "the language of a lesson given by number and of the report\n(default: en, "
                     "or the lesson's folder: lessons/zh reports in Chinese)",
             .value = cmdline::one_of(lesson_languages())},
            backend_option(),
            threads_option(),
            {"list", "", "list the lessons in both languages"},
            {"metrics", "", "list what @expect lines can read"},
            {"no-ask", "",
             "print each question's answer after its step, as in a pipe, instead of waiting in a "
             "terminal for the reader's prediction"},
            {"prose", "", "print each step's text too"},
            {"quiet", "", "only step titles, checks and the result"},
            timing_option()};
}

int cmd_lesson(int argc, char** argv) {
    // The lesson is the one word: kvscope-cli lesson FILE|N [options], anywhere on the line.
    const Args a("lesson", lesson_options(), argc, argv, 2, "lesson", "FILE|N");
    if (a.help()) {
        std::fputs(
            "Run a lesson headless: every step's directives on the live engine, with the "
            "numbers they produce and each @expect checked (N: the lesson's number in "
            "lessons/LANG/).\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    if (a.has("list")) {
        print_list();
        return 0;
    }
    if (a.has("metrics")) {
        print_metrics();
        return 0;
    }
    const std::string spec = a.str("lesson");
    if (spec.empty()) throw Error("lesson: which lesson? give a FILE or a number (see --list)");
    const std::string lang = a.checked("lang", "en");
    Lesson lesson = load_lesson(find_lesson(spec, lang));
    if (a.has("lang")) lesson.lang = report_lang_from_code(lang);
    const Words w{lesson.lang};
    BackendChoice be = make_backend(backend_from(a, "auto"), threads_from(a));
    SessionLessonTarget target(*be.backend);
    target.set_timing(timing_from(a));
    target.set_gpu_probe(
        [](const Model& m, const std::vector<int>& prompt) { return probe_gpu_step(m, prompt); });
    const bool quiet = a.has("quiet"), prose = a.has("prose");
    // In a terminal each @ask waits for the reader's prediction before its step runs; in a pipe,
    // or with --no-ask, nobody is asked and each answer is printed after its step.
    const bool asking = !a.has("no-ask") && terminal_can_ask();

    // Titles, prose and the log come from the lesson file and the tokenizer: escaped for the
    // terminal (an ESC sequence in a lesson must not clear the screen).
    const auto esc = [](const std::string& t) { return escape_for_terminal(t); };
    std::printf(
        w("lesson %s: %s (%zu steps) on %s (%s)\n", "课程 %s：%s（共 %zu 步），运行在 %s（%s）\n"),
        esc(lesson.file).c_str(), esc(lesson.title).c_str(), lesson.steps.size(),
        be.backend->name().c_str(), engine_message(be.note, lesson.lang).c_str());
    if (prose && !lesson.intro.empty()) std::printf("\n%s\n", esc(lesson.intro).c_str());
    target.restart();
    int checks = 0, failed = 0, not_judged = 0;
    bool error = false;
    AskEnd stopped = AskEnd::Answered;  // Quit or Interrupted: the reader ended the lesson
    int stopped_at = 0;
    for (int k = 0; k < static_cast<int>(lesson.steps.size()) && !error; ++k) {
        const LessonStep& st = lesson.steps[k];
        std::printf("\n[%d/%zu] %s\n", k + 1, lesson.steps.size(), esc(st.title).c_str());
        const Directive* asked = asking ? st.ask() : nullptr;
        // Asking, the prose is split where the @ask stands: what comes after it explains the
        // answer, so it is printed after the reveal.
        const std::string before = asked ? st.prose.substr(0, st.ask_at) : st.prose;
        if (prose && !before.empty()) std::printf("%s\n\n", esc(before).c_str());
        LearnerAnswer mine;
        if (asked) {
            stopped = ask_reader(asked->ask, lesson.lang, mine);
            if (stopped != AskEnd::Answered) {
                stopped_at = k + 1;
                break;
            }
        }
        const StepOutcome o = play_step(lesson, k, target);
        checks += o.checks;
        failed += o.failed;
        error = o.error;
        for (const auto& e : o.log) {
            using K = LessonLogEntry::Kind;
            if (e.kind == K::Ask) continue;  // after the step, below
            if (e.kind == K::Check) {
                not_judged += e.judged ? 0 : 1;
                std::printf("  %s  @%s\n",
                            e.pass     ? w("PASS", "通过")
                            : e.judged ? w("FAIL", "失败")
                                       : w("NOT JUDGED", "不评判"),
                            esc(e.directive).c_str());
                // The check in words, for a reader who does not read the check language.
                if (!e.words.empty()) std::printf("        %s\n", esc(e.words).c_str());
                if (!quiet || !e.pass)
                    for (const auto& l : e.lines) std::printf("        %s\n", esc(l).c_str());
                continue;
            }
            if (e.kind == K::Error) {
                std::printf("  %s %s\n", w("ERROR", "错误"),
                            e.lines.empty() ? "" : esc(e.lines[0]).c_str());
                continue;
            }
            if (quiet) continue;
            std::printf("  @%s\n", esc(e.directive).c_str());
            for (const auto& l : e.lines) std::printf("      %s\n", esc(l).c_str());
        }
        // The step's question with the engine's answer, after the step's lines; when the reader
        // was asked, their answer beside it, right or not.
        for (const auto& e : o.log) {
            if (e.kind != LessonLogEntry::Kind::Ask) continue;
            const Directive* d = st.ask();
            const std::string choices = d ? ask_choices_line(d->ask, lesson.lang) : "";
            std::printf("  %s  %s\n",
                        e.pass ? w("QUESTION", "提问") : w("QUESTION FAILED", "提问失败"),
                        esc(e.words).c_str());
            if (!choices.empty()) std::printf("        %s\n", esc(choices).c_str());
            if (asked) {
                const std::string said = learner_answer_words(asked->ask, mine, lesson.lang);
                std::string verdict;
                if (mine.given() && !e.answer.is_none())
                    verdict = std::string(w(", ", "，")) +
                              ask_verdict_words(learner_is_right(asked->ask, e.answer, mine),
                                                lesson.lang);
                std::printf("        %s%s%s\n", w("your answer: ", "你的答案："),
                            said.empty() ? w("none given", "未作答") : esc(said).c_str(),
                            verdict.c_str());
            }
            for (const auto& l : e.lines) std::printf("        %s\n", esc(l).c_str());
        }
        if (asked && prose && st.prose.size() > before.size())
            std::printf("\n%s\n", esc(st.prose.substr(before.size())).c_str());
    }
    std::printf(w("\nresult: %d checks, %d passed, %d failed",
                  "\n结果：共 %d 项检查，%d 项通过，%d 项失败"),
                checks, checks - failed - not_judged, failed);
    if (not_judged)
        std::printf(w(", %d on measured times not judged (a sanitizer build)",
                      "，%d 项测时检查不评判（sanitizer 构建）"),
                    not_judged);
    if (stopped != AskEnd::Answered)
        std::printf(w("; stopped by the reader before step %d of %zu\n",
                      "；读者在第 %d 步（共 %zu 步）之前结束\n"),
                    stopped_at, lesson.steps.size());
    else
        std::printf("%s%s\n", w("; ", "；"),
                    error ? w("stopped by an error", "因出错而中止")
                          : w("ran to the end", "完整运行到结尾"));
    // Ctrl+C ends as an interrupted program does (128 + SIGINT), so a shell loop stops too.
    if (stopped == AskEnd::Interrupted) return 130;
    return failed == 0 && !error ? 0 : 1;
}

}  // namespace kvs::cli
