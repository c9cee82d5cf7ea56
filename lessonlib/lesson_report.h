#pragma once
// Lesson log text: what a directive just did, in lines of plain English or Chinese with the
// numbers it produced (measured times, counted FLOPs and bytes), read from LessonFacts. The CLI
// prints these lines; a GUI can show them under the lesson text.
#include <string>
#include <vector>

#include "core/util/format.h"
#include "lessonlib/lesson.h"
#include "lessonlib/lesson_target.h"
#include "lessonlib/report_lang.h"

namespace kvs {

// Facts a target does not provide (null pointers) are left out of the text.
// `steps_before` / `twin_steps_before`: trace sizes of the session and its uncached twin before
// the directive ran, so a @decode reports exactly the steps it added.
std::vector<std::string> describe_action(const Directive& d, const LessonFacts& f, int steps_before,
                                         int twin_steps_before, ReportLang lang = ReportLang::En);

// Numbers are formatted by core/util/format.h (format_seconds, format_bytes, format_flops,
// format_si).

}  // namespace kvs
