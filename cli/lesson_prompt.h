#pragma once
// kvscope-cli lesson in a terminal: each @ask waits for the reader's prediction before its step
// runs. lessonlib/lesson_ask.h reads the answer and words the reveal; this file only talks to the
// terminal.
#include <string>

#include "lessonlib/lesson.h"
#include "lessonlib/lesson_ask.h"

namespace kvs::cli {

// Whether a lesson can ask its reader: stdin and stdout are both a terminal.
bool terminal_can_ask();

// How the reader left the question: with an answer (or Enter alone, none), or by ending the
// lesson: q or the end of input (Ctrl+D), or Ctrl+C.
enum class AskEnd { Answered, Quit, Interrupted };

// Prints the question with its choices (keys 1-4) and reads lines until one is an answer: a
// choice's key or a number, as the window takes them (learner_answer_from), or Enter alone (no
// answer: the engine's is revealed without a verdict). A line that is neither gets one line saying
// what is taken, and the prompt again.
AskEnd ask_reader(const AskSpec& a, ReportLang lang, LearnerAnswer& out);

}  // namespace kvs::cli
