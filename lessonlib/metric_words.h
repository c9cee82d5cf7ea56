#pragma once
// An @expect check in words for the reader (the lesson panel, `kvscope-cli lesson`), in English
// or Chinese: every metric of lessonlib/lesson_metrics.h has a phrase in both languages here,
// filled with its arguments ("the output of layer 0, head 1 for query row 3").
#include <string>
#include <vector>

#include "lessonlib/lesson_expr.h"
#include "lessonlib/report_lang.h"

namespace kvs {

// The phrase for metric `name` (an uncached_ twin included); empty when the metric has none.
std::string metric_phrase(const std::string& name, const std::vector<std::string>& args,
                          const std::vector<const double*>& numbers, ReportLang lang);

// The whole check as a sentence ("The chosen token is "nice""; Chinese: 这一步选中的 token
// 是“nice”).
std::string check_in_words(const Expectation& e, ReportLang lang);

// A value `metric` gives (its first argument `arg` where that is a string, as in
// scale("decode_bound")), in words for a sentence in `lang`: a number as a number; the named values
// of finish, phase and the @scale bounds in the reader's language ("end token": 遇到结束 token);
// a token's piece or any other string quoted (“nice” in Chinese); none as none (无).
std::string value_words(const std::string& metric, const std::string& arg, const LessonValue& v,
                        ReportLang lang);

// An expression in words (an @ask's answer: "the number of rows through the model").
std::string expr_in_words(const LessonExpr& e, ReportLang lang);

}  // namespace kvs
