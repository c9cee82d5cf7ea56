#pragma once
// The lesson parser: lesson text (lessons/README.md's format) to a Lesson (lessonlib/lesson.h).
// Each directive's arguments are checked as it is read, against the names the layers below know
// (an @expect's metrics, an @ask's expression, @scale's model and GPU presets), so a wrong file
// fails here, before any step plays. Every problem is a kvs::Error that starts with FILE:LINE:.
#include <string>
#include <string_view>

#include "lessonlib/lesson.h"

namespace kvs {

// Parses lesson text; `file` names it in error messages.
Lesson parse_lesson(std::string_view text, const std::string& file);
// Reads and parses a lesson file.
Lesson load_lesson(const std::string& path);

}  // namespace kvs
