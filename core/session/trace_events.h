#pragma once
// A run as Chrome / Perfetto trace events (the JSON that ui.perfetto.dev and chrome://tracing
// open): one track per session ("with KV cache", "without KV cache"), each step a complete
// ("ph":"X") slice, and inside it one complete slice per op of the step's op log, with its layer,
// shapes [rows, features] and counted FLOPs as args. Times are the measured ones laid end to
// end: a step starts where the one before it ended (the pauses between steps, a window waiting
// for a key, are not recorded), an op where the one before it ended; ops that ran inside another
// op's call (attention's scores, softmax and x V are one fused kernel) span that call, nested
// under it. An op the backend did not time on its own lasts 0 and says so ("measured": false).
#include <ostream>

#include "core/session/trace_json.h"

namespace kvs {

void write_trace_events(std::ostream& os, const TraceJsonRun& run);
// As an output file: an earlier one (it starts with kvscope's process-name event) is replaced.
OutputKind trace_events_output();

}  // namespace kvs
