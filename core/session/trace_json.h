#pragma once
// The whole run as JSON: one session, or compare mode's cached session and its uncached twin,
// with where and on what it was recorded. Schema and versions: docs/trace-json.md;
// core/trace_reader.h reads it back for a replay.
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/session/finish_reason.h"
#include "core/session/sampler.h"
#include "core/session/trace.h"
#include "core/util/output_file.h"

namespace kvs {

class JsonWriter;
class Model;
class Session;
class Tokenizer;

// The version this build writes; core/trace_reader.h reads it and every one before it.
inline constexpr int kTraceJsonVersion = 2;

// Where and on what a run was recorded, for the screen of its replay.
struct RecordedOn {
    std::string program;  // "kvscope-cli generate", "kvscope", ...
    std::string version;  // that program's version (core/version.h)
    std::string date;     // UTC, ISO 8601: "2026-11-26T15:20:00Z"
    std::string backend;  // "cpu", "cuda", "cuda-emulated"
    std::string device;   // what measured the times ("CPU, 1 thread", a GPU's name)
    std::string host;     // the machine: operating system and processor
    int timing_runs = 1;  // each step under 10 ms timed as the median of up to this many runs
};
// A run recorded by this process now: date and host filled in.
RecordedOn recorded_here(std::string program, std::string backend, std::string device,
                         int timing_runs);

// One session of the run.
struct TraceJsonSession {
    CacheMode mode = CacheMode::Cached;  // the mode it was made in (each step records its own)
    std::span<const int> tokens;         // the prompt, then every token chosen
    int prompt_len = 0;
    std::string text;  // as llama2.c prints it
    FinishReason finish = FinishReason::None;
    const Trace* trace = nullptr;
};
TraceJsonSession trace_json_session(const Session& s);

struct TraceJsonRun {
    const Model* model = nullptr;  // names the tokens' pieces
    SamplerConfig sampler;
    RecordedOn recorded;
    std::vector<TraceJsonSession> sessions;  // one, or compare's cached session then its twin
    std::span<const double> logit_max_diff;  // compare: per step (NaN: not compared)
};

void write_trace_json(std::ostream& os, const TraceJsonRun& run);
// A step's sampling stages as the member "sampling" (docs/trace-json.md), each entry's piece
// named by `tok`: the trace's and kvscope-cli explain's.
void write_sampling_json(JsonWriter& j, const SamplingStages& s, const Tokenizer& tok);
// The trace JSON as an output file: an earlier one (its first key is kvscope_trace) is replaced.
OutputKind trace_json_output();
// One session, as kvscope-cli generate and toy record it.
void write_trace_json(std::ostream& os, const Session& s, const RecordedOn& recorded = {});

}  // namespace kvs
