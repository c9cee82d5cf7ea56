#pragma once
// The engine worker's requests and sessions in the window's words (gui/strings.cpp's table): the
// worker hands over what it does (gui/engine/engine_worker.h), the window says it.
#include <string>

#include "core/session/trace.h"
#include "gui/engine/snapshot.h"

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

// Why generation ended, in the window's words.
const char* finish_reason_text(FinishReason reason);
// The step a session shows: the one asked, clamped to what the session has.
int shown_step(const SessionView& s, int step);
// "with KV cache" / "without KV cache" for the mode step `step` ran in (a session may switch
// modes between steps); the session's own label when it has no such step.
const char* step_label(const SessionView& s, int step);

}  // namespace kvs::gui
