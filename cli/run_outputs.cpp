#include "cli/run_outputs.h"

#include <sstream>

#include "core/model/model.h"
#include "core/session/trace_csv.h"
#include "core/session/trace_events.h"
#include "core/util/output_file.h"

namespace kvs::cli {

std::vector<OptionSpec> run_output_options() {
    return {
        {"trace-json", "FILE", "write the whole run as trace JSON (kvscope --replay opens it)"},
        {"trace-events", "FILE",
         "write the run as Chrome / Perfetto trace events (ui.perfetto.dev,\nchrome://tracing): "
         "each step a slice, each op inside it"},
        {"csv", "FILE", "write one line per step as CSV (times, counted FLOPs, KV bytes)"},
        {"attention-csv", "FILE",
         "write one head's attention matrix after the last step as CSV\n(--layer, --head)"},
        {"layer", "L", "the layer of --attention-csv (default 0)"},
        {"head", "H", "the head of --attention-csv (default 0)"}};
}

RunOutputs run_outputs_from(const Args& a, const ModelConfig& c) {
    RunOutputs o;
    o.trace_json = a.str("trace-json");
    o.trace_events = a.str("trace-events");
    o.csv = a.str("csv");
    o.attention_csv = a.str("attention-csv");
    o.layer = a.integer("layer", 0, 0, c.n_layers - 1);
    o.head = a.integer("head", 0, 0, c.n_heads - 1);
    if ((a.has("layer") || a.has("head")) && o.attention_csv.empty())
        a.fail("--layer and --head choose the head of --attention-csv FILE");
    for (const std::string* p : {&o.trace_json, &o.trace_events, &o.csv, &o.attention_csv})
        if (!p->empty()) check_output_path(*p);
    return o;
}

void write_run_outputs(const RunOutputs& o, const TraceJsonRun& run) {
    auto write = [](const std::string& path, const OutputKind& kind, auto&& fill) {
        if (path.empty()) return;
        std::ostringstream s;
        fill(s);
        write_output_file(path, s.str(), kind);
    };
    write(o.trace_json, trace_json_output(), [&](std::ostream& s) { write_trace_json(s, run); });
    write(o.trace_events, trace_events_output(),
          [&](std::ostream& s) { write_trace_events(s, run); });
    write(o.csv, steps_csv_output(), [&](std::ostream& s) { write_steps_csv(s, run); });
    write(o.attention_csv, attention_csv_output(), [&](std::ostream& s) {
        const auto& steps = run.sessions.at(0).trace->steps();
        write_attention_csv(s, steps, static_cast<int>(steps.size()) - 1, o.layer, o.head,
                            run.model->tokenizer());
    });
}

}  // namespace kvs::cli
