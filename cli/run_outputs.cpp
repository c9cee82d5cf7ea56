#include "cli/run_outputs.h"

#include <ostream>
#include <streambuf>
#include <string>
#include <utility>

#include "cli/progress_line.h"

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
        {.name = "layer",
         .value_name = "L",
         .help = "the layer of --attention-csv (default 0)",
         .value = cmdline::whole_in(0, 1 << 16)},
        {.name = "head",
         .value_name = "H",
         .help = "the head of --attention-csv (default 0)",
         .value = cmdline::whole_in(0, 1 << 16)}};
}

RunOutputs run_outputs_from(const Args& a, const ModelConfig& c) {
    RunOutputs o;
    o.trace_json = a.str("trace-json");
    o.trace_events = a.str("trace-events");
    o.csv = a.str("csv");
    o.attention_csv = a.str("attention-csv");
    o.layer = a.integer_within("layer", 0, 0, c.n_layers - 1, "the model's layers");
    o.head = a.integer_within("head", 0, 0, c.n_heads - 1, "the model's heads");
    if ((a.has("layer") || a.has("head")) && o.attention_csv.empty())
        a.fail("--layer and --head choose the head of --attention-csv FILE");
    // Each path as its kind: a user's file or a read-only one is refused before the run.
    const std::pair<const std::string*, OutputKind> outputs[] = {
        {&o.trace_json, trace_json_output()},
        {&o.trace_events, trace_events_output()},
        {&o.csv, steps_csv_output()},
        {&o.attention_csv, attention_csv_output()}};
    for (const auto& [path, kind] : outputs)
        if (!path->empty()) check_output_path(*path, kind);
    return o;
}

namespace {

// A stream into a string through a 64 KiB buffer, telling a progress line how many bytes it
// holds each time the buffer is emptied: a long run's trace JSON is hundreds of MB, seconds of
// writing.
class CountingBuffer : public std::streambuf {
  public:
    CountingBuffer(std::string& out, ProgressLine& line, std::string what)
        : out_(out), line_(line), what_(std::move(what)) {
        setp(buffer_, buffer_ + sizeof buffer_);
    }
    // The whole file made, before it is written out.
    void done() {
        empty();
        show();
    }

  protected:
    int_type overflow(int_type c) override {
        empty();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        show();
        return traits_type::not_eof(c);
    }
    int sync() override {
        empty();
        return 0;
    }

  private:
    void empty() {
        out_.append(pbase(), static_cast<std::size_t>(pptr() - pbase()));
        setp(buffer_, buffer_ + sizeof buffer_);
    }
    void show() {
        if (line_.due()) line_.show(what_ + ": " + bytes_of(out_.size(), 0) + " written");
    }
    std::string& out_;
    ProgressLine& line_;
    std::string what_;
    char buffer_[64 << 10];
};

}  // namespace

void write_run_outputs(const RunOutputs& o, const TraceJsonRun& run) {
    ProgressLine progress("kvscope-cli");
    auto write = [&](const std::string& path, const OutputKind& kind, auto&& fill) {
        if (path.empty()) return;
        std::string bytes;
        CountingBuffer buffer(bytes, progress, path);
        std::ostream s(&buffer);
        fill(s);
        buffer.done();
        write_output_file(path, bytes, kind);
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
