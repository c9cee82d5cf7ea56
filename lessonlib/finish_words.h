#pragma once
// Why a generation stopped, in words, in English and Chinese side by side: the one place they are
// worded for every front end (lesson reports and checks, the window's token strip, toolbar, batch
// panel and end-of-generation message). The English short words are core's finish_reason_name,
// the trace's own (core/session/finish_reason.h).
#include <string>

#include "core/session/finish_reason.h"
#include "lessonlib/report_lang.h"

namespace kvs {

// As a label: "length limit", 长度上限.
const char* finish_words(FinishReason r, ReportLang lang);

// The reason as a sentence names it: "the length limit", 达到长度上限 (an @ask's choice, a check in
// words).
const char* finish_value_words(FinishReason r, ReportLang lang);

// The reason whose core word (finish_reason_name) is `name`; false when none is.
bool finish_reason_named(const std::string& name, FinishReason& out);

// The window's sentence when a generation ends, a printf format: the context's length (%d) where
// the context is why, no argument otherwise. "Generation ended: the context of %d tokens is full."
const char* finish_sentence(FinishReason r, ReportLang lang);

}  // namespace kvs
