#pragma once
// The engine worker's requests and sessions in the window's words (gui/strings.cpp's table): the
// worker hands over what it does (gui/engine_worker.h), the window says it.
#include <string>

#include "core/session/trace.h"
#include "gui/engine_worker.h"

namespace kvs::gui {

// The busy banner's words for a request in the current language ("opening default",
// "decoding 20 steps").
std::string request_words(const EngineRequest& r);
// The start of a failed request's message in English ("could not open the model"); tr() says it
// in the window's language. Empty for EngineTask::None.
const char* failure_words(EngineTask t);
// A session named by its cache mode, in English ("with KV cache"); tr() says it in the window's
// language.
const char* session_label(CacheMode m);
// A session named by its mode and mask: in the bidirectional view "causal, without KV cache" and
// "bidirectional (no causal mask)", else as session_label(mode).
const char* session_label(const SessionView& s);

}  // namespace kvs::gui
