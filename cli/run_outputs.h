#pragma once
// What generate, compare, toy and replay write besides their text: the run as trace JSON, as
// Chrome / Perfetto trace events, the per-step table and one head's attention matrix as CSV.
// Every path is checked before the run (an input is never overwritten) and written whole at
// its end (core/output_file.h).
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/model/model_config.h"
#include "core/session/trace_json.h"

namespace kvs::cli {

struct RunOutputs {
    std::string trace_json, trace_events, csv, attention_csv;
    int layer = 0, head = 0;  // the attention matrix's, after the last step
    // What the session must keep for them: attention (and K/V, q rows for the trace JSON), and
    // the op log.
    bool wants_attention() const { return !trace_json.empty() || !attention_csv.empty(); }
    bool wants_everything() const { return !trace_json.empty(); }
    bool wants_ops() const { return !trace_json.empty() || !trace_events.empty(); }
};

std::vector<OptionSpec> run_output_options();
// Reads the options and checks the layer and head against the model and each path (run after
// the model and tokenizer were read, so they count as inputs).
RunOutputs run_outputs_from(const Args& a, const ModelConfig& c);
void write_run_outputs(const RunOutputs& o, const TraceJsonRun& run);

}  // namespace kvs::cli
