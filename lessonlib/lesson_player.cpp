#include "lessonlib/lesson_player.h"

#include "core/session/session.h"
#include "core/util/error.h"
#include "lessonlib/engine_messages.h"
#include "lessonlib/lesson_ask.h"
#include "lessonlib/lesson_metrics.h"
#include "lessonlib/lesson_report.h"
#include "lessonlib/metric_words.h"

namespace kvs {
namespace {

int trace_size(const Session* s) {
    return s ? static_cast<int>(s->trace().steps().size()) : 0;
}

void act(const Directive& d, LessonTarget& t) {
    switch (d.kind) {
        case DirectiveKind::Model:
            t.load_model(d.arg);
            break;
        case DirectiveKind::Prompt:
            t.set_prompt(d.arg);
            break;
        case DirectiveKind::Limit:
            t.set_limit(d.n);
            break;
        case DirectiveKind::Cache:
            t.set_cache(d.cache);
            break;
        case DirectiveKind::Prefill:
            t.prefill();
            break;
        case DirectiveKind::Decode:
            t.decode(d.n);
            break;
        case DirectiveKind::Reset:
            t.reset();
            break;
        case DirectiveKind::Highlight:
            t.highlight(d.n, d.head);
            break;
        case DirectiveKind::Explain:
            t.explain(d.n, d.head, d.position);
            break;
        case DirectiveKind::Show:
            t.show(d.arg);
            break;
        case DirectiveKind::WhatIf:
            if (!t.facts().model) throw Error("no model loaded yet (@model comes first)");
            t.show("whatif");
            break;
        case DirectiveKind::Batch:
            t.batch(d.batch);
            break;
        case DirectiveKind::Scale:
            t.scale(d.scale);
            break;
        case DirectiveKind::Gpu:
            t.gpu();
            break;
        case DirectiveKind::Serve:
            t.serve(d.serve);
            break;
        case DirectiveKind::Ask:
        case DirectiveKind::Expect:
            break;
    }
}

// An @ask: the engine's answer now, in words, with the question and the why.
LessonLogEntry ask_entry(const Directive& d, const LessonFacts& f, ReportLang lang,
                         bool judge_times, bool& judged) {
    const Words w{lang};
    const AskSpec& a = d.ask;
    LessonLogEntry e;
    e.kind = LessonLogEntry::Kind::Ask;
    e.line = d.line;
    e.directive = d.text;
    e.words = a.question;
    bool reads_time = false;
    try {
        e.answer = a.answer.evaluate([&](const std::string& name, const auto& args) {
            reads_time = reads_time || is_timed_lesson_metric(name, args);
            return read_lesson_metric(f, name, args);
        });
        e.choice = ask_choice_of(a, e.answer);
        e.pass = a.choices.empty() ? e.answer.is_number() : e.choice >= 0;
        e.lines.push_back(w("the engine's answer: ", "引擎的答案：") +
                          ask_answer_words(a, e.answer, lang));
        if (!e.pass)
            e.lines.push_back(a.choices.empty() ? w("not a number: nothing a learner can type",
                                                    "不是数字：学习者无法输入")
                                                : w("none of the choices", "不在选项之中"));
    } catch (const Error& err) {
        e.pass = false;
        e.answer = LessonValue::none();
        e.lines.push_back(w.zh() ? "无法求值：" + engine_message(err.what(), lang) : err.what());
    }
    e.lines.push_back(w("why: ", "原因：") + a.why);
    judged = e.pass || !reads_time || judge_times;
    e.judged = judged;
    return e;
}

}  // namespace

StepOutcome play_step(const Lesson& lesson, int step, LessonTarget& target,
                      const PlayOptions& options) {
    StepOutcome out;
    out.step = step;
    if (step < 0 || step >= static_cast<int>(lesson.steps.size()))
        throw Error(lesson.file + ": no step " + std::to_string(step + 1) + " (the lesson has " +
                    std::to_string(lesson.steps.size()) + ")");
    for (const Directive& d : lesson.steps[step].directives) {
        LessonLogEntry e;
        e.line = d.line;
        e.directive = d.text;
        if (d.kind == DirectiveKind::Ask) {
            bool judged = true;
            LessonLogEntry a =
                ask_entry(d, target.facts(), lesson.lang, options.judge_times, judged);
            ++out.checks;
            if (!a.pass && judged) ++out.failed;
            out.log.push_back(std::move(a));
            continue;
        }
        if (d.kind == DirectiveKind::Expect) {
            const LessonFacts f = target.facts();
            bool reads_time = false;
            const auto o = d.expect.evaluate([&](const std::string& name, const auto& args) {
                reads_time = reads_time || is_timed_lesson_metric(name, args);
                return read_lesson_metric(f, name, args);
            });
            const Words w{lesson.lang};
            e.kind = LessonLogEntry::Kind::Check;
            e.pass = o.pass;
            e.words = check_in_words(d.expect, lesson.lang);
            // Chinese: a string value in its words (遇到结束 token, “nice”), not English quoted.
            const auto shown = [&](const LessonValue& v, bool left) {
                if (!w.zh() || !v.is_string()) return v.to_string();
                std::string arg;
                const std::string metric = d.expect.side_metric(left, &arg);
                return value_words(metric, arg, v, lesson.lang);
            };
            if (o.pass)
                e.lines.push_back(w("left ", "左边 ") + shown(o.lhs, true) +
                                  w(", right ", "，右边 ") + shown(o.rhs, false));
            else if (o.compared)
                e.lines.push_back(w("got ", "实际是 ") + shown(o.lhs, true) +
                                  w(" against ", "，对照的是 ") + shown(o.rhs, false));
            else
                e.lines.push_back(w.zh() ? "无法求值：" + engine_message(o.why, lesson.lang)
                                         : o.why);
            e.judged = o.pass || !reads_time || options.judge_times;
            if (!e.judged)
                e.lines.push_back(
                    w("not judged: a sanitizer build's times measure its "
                      "instrumentation more than the model",
                      "不评判：启用检查工具（sanitizer）的构建中，测得的时间主要反映"
                      "检测开销而不是模型"));
            ++out.checks;
            if (!o.pass && e.judged) ++out.failed;
            out.log.push_back(std::move(e));
            continue;
        }
        try {
            const LessonFacts before = target.facts();
            const int n0 = trace_size(before.session), u0 = trace_size(before.uncached);
            act(d, target);
            e.lines = describe_action(d, target.facts(), n0, u0, lesson.lang);
        } catch (const Error& err) {
            e.kind = LessonLogEntry::Kind::Error;
            e.pass = false;
            e.lines.push_back(lesson.file + ":" + std::to_string(d.line) + ": @" + d.text + ": " +
                              engine_message(err.what(), lesson.lang));
            out.error = true;
            out.log.push_back(std::move(e));
            break;
        }
        out.log.push_back(std::move(e));
    }
    return out;
}

std::vector<StepOutcome> replay_to(const Lesson& lesson, int step, LessonTarget& target) {
    target.restart();
    std::vector<StepOutcome> all;
    for (int k = 0; k <= step; ++k) {
        all.push_back(play_step(lesson, k, target));
        if (all.back().error) break;
    }
    return all;
}

}  // namespace kvs
