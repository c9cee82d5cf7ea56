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

// The whole check as a sentence ("The chosen token is "nice"").
std::string check_in_words(const Expectation& e, ReportLang lang);

}  // namespace kvs
