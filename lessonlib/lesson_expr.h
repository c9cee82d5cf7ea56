#pragma once
// The checks a lesson makes with `@expect`: a comparison of two small arithmetic expressions
// over numbers, quoted strings, `none` and named metrics read from the live session, e.g.
//   head(0, 3, 2) == 31/3 within 1e-6
//   logit("nice") > logit("delicious") + 1
//   max_logit_diff <= 1e-4
//   token == " Paris"
// Grammar (whitespace between tokens is free):
//   check := sum CMP sum [ "within" sum ]        CMP: == != < <= > >=
//   sum   := prod { (+|-) prod }
//   prod  := unary { (*|/) unary }
//   unary := - unary | NUMBER | "STRING" | none | NAME [ "(" sum { "," sum } ")" ] | ( sum )
// `within T` turns == into |a - b| <= T and != into |a - b| > T.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lessonlib/report_lang.h"

namespace kvs {

struct LessonValue {
    enum class Kind { Number, String, None };
    Kind kind = Kind::None;
    double num = 0;
    std::string str;

    static LessonValue number(double v) { return {Kind::Number, v, {}}; }
    static LessonValue string(std::string s) { return {Kind::String, 0, std::move(s)}; }
    static LessonValue none() { return {}; }
    bool is_number() const { return kind == Kind::Number; }
    bool is_string() const { return kind == Kind::String; }
    bool is_none() const { return kind == Kind::None; }
    std::string to_string() const;  // numbers with up to 6 significant digits, strings quoted
};

struct ExprNode;  // defined in lesson_expr.cpp

// Resolves a metric: name and evaluated arguments to a value; throws kvs::Error when the
// metric cannot be read in the current state (e.g. no step yet).
using MetricReader =
    std::function<LessonValue(const std::string& name, const std::vector<LessonValue>& args)>;
// A metric in words: its name, each argument in words, and each argument's value where it is a
// plain number (-1, 3), else null; returns the phrase ("the logit of \"nice\"").
using MetricPhrase =
    std::function<std::string(const std::string& name, const std::vector<std::string>& args,
                              const std::vector<const double*>& numbers)>;
// At parse time: returns an empty string when NAME with `n_args` arguments is known, else why not.
using MetricValidator = std::function<std::string(const std::string& name, int n_args)>;
// A string value in words where a check compares it with `metric` (its first argument `arg` when
// that is a string, as scale("decode_bound")): "end token" as 遇到结束 token in Chinese. Empty:
// the value quoted as it is.
using ValuePhrase = std::function<std::string(const std::string& metric, const std::string& arg,
                                              const LessonValue& value)>;

class Expectation;

// One expression alone (the grammar's `sum`): the answer an @ask reveals. It may also be a
// comparison (`sum CMP sum`, no `within`), whose value is 1 when it holds and 0 when not: the
// answer to a yes-or-no question.
class LessonExpr {
  public:
    // Throws kvs::Error with a one-line message, like Expectation::parse.
    static LessonExpr parse(std::string_view text, const MetricValidator& validate);
    // Throws kvs::Error when a metric cannot be read or arithmetic meets a string.
    LessonValue evaluate(const MetricReader& read) const;
    const std::string& text() const { return text_; }
    // The metric the whole expression reads, when it is one metric ("finish", "scale"), and its
    // first argument when that is a "string" ("decode_bound"); empty otherwise.
    std::string metric() const;
    std::string metric_arg() const;
    // The expression in words ("the number of rows through the model").
    std::string in_words(const MetricPhrase& phrase, ReportLang lang) const;
    bool is_comparison() const { return compare_ != nullptr; }

  private:
    std::string text_;
    std::shared_ptr<const ExprNode> root_;
    std::shared_ptr<const Expectation> compare_;
};

class Expectation {
  public:
    enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };
    // Throws kvs::Error with a one-line message (no file or line: the caller adds them).
    static Expectation parse(std::string_view text, const MetricValidator& validate);

    struct Outcome {
        bool pass = false;
        LessonValue lhs, rhs;
        std::string why;  // for a failure or an evaluation error, in words
        bool compared =
            false;  // both sides evaluated and compared (a failure is "got A against B")
    };
    // Evaluation errors (a metric that cannot be read, arithmetic on a string) are a failed
    // outcome with `why` set, never an exception.
    Outcome evaluate(const MetricReader& read) const;
    const std::string& text() const { return text_; }
    // The metric a side's value is said in: the side's own when it is one metric, else the other
    // side's (a "string" compared with finish is a value of finish); its first argument where
    // that is a string in `arg`. Empty when neither side is one metric.
    std::string side_metric(bool left, std::string* arg) const;
    // The check as a sentence a reader can follow, in `lang`: the comparison and the arithmetic in
    // words, each metric as `phrase` says ("The logit of "warm" minus the logit of "delicious" is
    // 14.9, to within 0.0001").
    // A string compared with a metric is put in words by `value` where it gives any.
    std::string in_words(const MetricPhrase& phrase, ReportLang lang,
                         const ValuePhrase& value = {}) const;

  private:
    std::string text_;
    std::shared_ptr<const ExprNode> lhs_, rhs_, tol_;
    Cmp cmp_ = Cmp::Eq;
};

}  // namespace kvs
