#pragma once
// @ask, predict then reveal: the learner answers a question before the step runs (a choice with
// keys 1-4, or a number typed in), then the live engine's answer is revealed beside theirs with a
// one-line why. The directive's text is the same in every language:
//   @ask rows choices=1 | 4 | 5 | 8
//   @ask finish choices="end token" | "length limit"
//   @ask flops(0) > decode_flops choices=yes | no      (a comparison: 1 is yes, 0 is no)
//   @ask head(0, 3, 0) within=0.05                     (a number, typed)
// and the @question and @why lines under it carry the words, translated.
#include <string>

#include "lessonlib/lesson.h"
#include "lessonlib/report_lang.h"

namespace kvs {

// The arguments of an @ask line: EXPR, then optional choices= and within=. Throws kvs::Error with
// a one-line message.
AskSpec parse_ask(const std::string& args);

// The choice the engine's answer is (0-based), or -1 when it is none of them (a number within
// 1e-9 of it, relatively, or an equal string).
int ask_choice_of(const AskSpec& a, const LessonValue& answer);

// Choice `i` in words for the reader: a number as a number, yes and no, a named value (the end
// token, decode, memory bandwidth) in the reader's language, a token quoted.
std::string ask_choice_words(const AskSpec& a, int i, ReportLang lang);
// The choices on one line, each after its key: "1) 1  2) 4  3) 5"; empty without choices.
std::string ask_choices_line(const AskSpec& a, ReportLang lang);
// The engine's answer in the same words.
std::string ask_answer_words(const AskSpec& a, const LessonValue& answer, ReportLang lang);

// What the learner gave: a choice (0-based), or a number typed in; neither when they skipped.
struct LearnerAnswer {
    int choice = -1;
    bool typed = false;
    double number = 0;
    bool given() const { return choice >= 0 || typed; }
};
// Whether the learner's answer is the engine's: the same choice, or a typed number within `within`
// of it (at least the answer's own rounding to 6 significant digits).
bool learner_is_right(const AskSpec& a, const LessonValue& answer, const LearnerAnswer& l);

// The learner's answer as typed (the window's --answer, a line at the CLI's prompt): a choice's
// key, "1" to "4", when the question has choices, else a number. False, and `out` untouched, for
// anything else; the caller says what it takes (ask_answer_hint).
bool learner_answer_from(const AskSpec& a, const std::string& text, LearnerAnswer& out);
// What learner_answer_from takes, in words: "a choice from 1 to 3" or "a number".
std::string ask_answer_hint(const AskSpec& a, ReportLang lang);

// The learner's answer in words: the choice's words, the number typed, or empty when none.
std::string learner_answer_words(const AskSpec& a, const LearnerAnswer& l, ReportLang lang);
// The reveal's verdict on a given answer: "you predicted it" or "not what you predicted".
const char* ask_verdict_words(bool right, ReportLang lang);

}  // namespace kvs
