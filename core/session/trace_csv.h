#pragma once
// A run's numbers as CSV for a spreadsheet or pandas: the attention matrix of one head after one
// step (core/attention_matrix.h, as the window's heatmap draws it), and one row per step of
// every session. Columns in docs/trace-json.md ("CSV").
#include <ostream>
#include <span>

#include "core/session/trace.h"
#include "core/session/trace_json.h"
#include "core/tokenizers/tokenizer.h"

namespace kvs {

// Header "position,token,1,2,..,n" (key positions, from 1); one line per query position: its
// position, its token's piece (on one line: control bytes and bytes that are not UTF-8 as
// \xNN), then its weights over keys 1..position. A key after the query
// (masked) is an empty cell; NA where the row is not in the trace (payload dropped) or has no
// key to attend to (the toy's "even" head at position 1). Throws kvs::Error when the step,
// layer or head is not in the trace.
void write_attention_csv(std::ostream& os, std::span<const StepRecord> steps, int step, int layer,
                         int head, const Tokenizer& tok);

// One line per step of each session (compare: the cached session's steps, then its twin's), with
// the measured times (ms), the counted FLOPs and bytes, and in compare mode the step's largest
// logit difference between the two sessions.
void write_steps_csv(std::ostream& os, const TraceJsonRun& run);

// The two CSVs as output files: an earlier one of the same kind (its header line) is replaced.
OutputKind attention_csv_output();
OutputKind steps_csv_output();

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(std::string_view s);

}  // namespace kvs
