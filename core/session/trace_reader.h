#pragma once
// A trace JSON (core/trace_json.h; schema in docs/trace-json.md) read back into Traces, for a
// replay: the window, the web page and kvscope-cli replay show a recorded run from it with no
// model file. Version 1 and 2 are read; any other is refused by name. A trace is input like any
// file: its size is checked against memory before it is parsed, its nesting before the parser
// sees it, and every id, count and shape against the recorded model, so a hostile trace is one
// kvs::Error line, never a read out of bounds in a view.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/session/finish_reason.h"
#include "core/session/sampler.h"
#include "core/session/trace.h"
#include "core/session/trace_json.h"
#include "core/util/progress.h"

namespace kvs {

struct RecordedSession {
    CacheMode mode = CacheMode::Cached;
    std::vector<int> tokens;  // the prompt, then every token chosen
    int prompt_len = 0;
    std::string text;
    FinishReason finish = FinishReason::None;
    Trace trace{SIZE_MAX};  // every step as recorded (a step the recording evicted has no payload)
};

struct RecordedRun {
    int version = 0;      // the file's kvscope_trace
    RecordedOn recorded;  // version 1: backend and device from the steps, the rest empty
    // Shapes and pieces without weights (core/replay_model.h); the toy is the built-in one.
    std::shared_ptr<const Model> model;
    SamplerConfig sampler;
    std::vector<RecordedSession> sessions;  // one, or compare's cached session then its twin
    std::vector<double> logit_max_diff;     // compare: per step (NaN: not compared)

    bool compare() const { return sessions.size() > 1; }
    // The run as trace_json writes it (to save it again, or as Chrome trace events).
    TraceJsonRun view() const;
};

// The largest trace file read: 4 GiB (256 MiB in a 32-bit process, the web page), and never more
// than a third of the host's available memory (parsing holds the text and its tree).
std::uint64_t max_trace_bytes();

// Throws kvs::Error "SOURCE: ..." (one line) for anything that is not a trace this build reads.
// `progress`, when given, hears the bytes parsed so far (every MiB) and then their total.
RecordedRun read_trace_json(std::string_view text, const std::string& source,
                            const ByteProgress& progress = {});
RecordedRun read_trace_file(const std::string& path, const ByteProgress& progress = {});

// Whether the file at `path` starts like a trace JSON ('{' and "kvscope_trace" in its first
// bytes): what a window or page dropped is a trace to replay, not a model to open.
bool looks_like_trace(const std::string& path);

}  // namespace kvs
