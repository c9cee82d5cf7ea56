#pragma once
// Why a sequence stopped generating, and the one rule that decides it (Session and BatchSession
// both ask stop_rule, so they check the same things in the same order).
#include <string_view>

namespace kvs {

enum class FinishReason { None, EndToken, ContextFull, LengthLimit };

// "running", "end token", "context full", "length limit": the words of the trace JSON and of the
// lessons' `finish` metric.
const char* finish_reason_name(FinishReason r);

// After a token was appended: the end token first; then the context, so that a limit equal to
// what the context allows ends as "context full" (that is why it stopped); then the limit.
//   tokens: prompt + generated so far; max_new_tokens <= 0: no limit.
FinishReason stop_rule(bool chose_end_token, int tokens, int seq_len, int generated,
                       int max_new_tokens);

}  // namespace kvs
