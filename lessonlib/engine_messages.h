#pragma once
// The engine's messages in the reader's language. The engine and the backends speak English
// (kvs::Error texts, the backend's "why this one" note, the model's fallback note); the window
// and `kvscope-cli lesson --lang zh` show them in Chinese through a table of their forms, each with
// %s slots for the parts that vary (a path, a device's own error), which are translated in turn
// where they match a form. A message of no known form is shown as it is.
#include <string>
#include <vector>

#include "lessonlib/report_lang.h"

namespace kvs {

struct MessageForm {
    const char* en;  // with %s slots
    const char* zh;  // the same number of %s slots, in the same order
};
const std::vector<MessageForm>& engine_message_forms();

// `message` in language `l`.
std::string engine_message(const std::string& message, ReportLang l);

}  // namespace kvs
