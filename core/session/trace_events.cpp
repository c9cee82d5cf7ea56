#include "core/session/trace_events.h"

#include <algorithm>
#include <string>

#include "core/model/model.h"
#include "core/util/json_writer.h"

namespace kvs {
namespace {

constexpr int kPid = 1;

void metadata(JsonWriter& j, const char* what, int tid, const std::string& name) {
    j.begin_object();
    j.field("ph", "M").field("name", what).field("pid", kPid).field("tid", tid);
    j.key("args").begin_object().field("name", name).end_object();
    j.end_object();
}

// One op of a step: where it starts and how long it lasts, in microseconds.
struct Placed {
    double ts = 0, dur = 0;
    bool measured = false;
};

// Ops end to end from `start`; an op inside another's call spans that call.
std::vector<Placed> place_ops(const OpLog& log, double start) {
    std::vector<Placed> out(log.ops.size());
    double t = start;
    for (std::size_t i = 0; i < log.ops.size(); ++i) {
        const OpRecord& o = log.ops[i];
        if (o.timed_with >= 0 && o.timed_with < static_cast<int>(i)) {
            out[i] = out[o.timed_with];
            continue;
        }
        out[i].ts = t;
        out[i].measured = o.seconds >= 0;
        out[i].dur = out[i].measured ? o.seconds * 1e6 : 0;
        t += out[i].dur;
    }
    return out;
}

}  // namespace

// What every trace events file kvscope writes starts with, up to the process's name.
constexpr char kEventsStart[] =
    R"({"traceEvents":[{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"kvscope: )";

OutputKind trace_events_output() {
    return output_starting("trace events file", kEventsStart);
}

void write_trace_events(std::ostream& os, const TraceJsonRun& run) {
    const Model& m = *run.model;
    JsonWriter j(os);
    j.begin_object();
    j.key("traceEvents").begin_array();
    const RecordedOn& r = run.recorded;
    metadata(j, "process_name", 0,
             "kvscope: " + m.name() + (r.device.empty() ? "" : " on " + r.device));
    for (std::size_t s = 0; s < run.sessions.size(); ++s) {
        const TraceJsonSession& session = run.sessions[s];
        const int tid = static_cast<int>(s) + 1;
        metadata(j, "thread_name", tid,
                 session.mode == CacheMode::Cached ? "with KV cache" : "without KV cache");
        j.begin_object();
        j.field("ph", "M").field("name", "thread_sort_index").field("pid", kPid).field("tid", tid);
        j.key("args").begin_object().field("sort_index", tid).end_object();
        j.end_object();
        double t = 0;  // microseconds from the session's first step
        for (const StepRecord& st : session.trace->steps()) {
            const std::vector<Placed> ops = place_ops(st.ops, t);
            double end = t + st.wall_seconds * 1e6;
            for (const Placed& p : ops) end = std::max(end, p.ts + p.dur);
            j.begin_object();
            j.field("ph", "X").field("cat", "step").field("pid", kPid).field("tid", tid);
            j.field("name", st.phase == Phase::Prefill ? std::string("prefill")
                                                       : "decode " + std::to_string(st.index));
            j.field("ts", t).field("dur", end - t);
            j.key("args").begin_object();
            j.field("step", st.index).field("mode", mode_name(st.mode));
            j.field("tokens_processed", st.tokens_processed).field("kv_len", st.kv.len);
            j.field("wall_s", st.wall_seconds).field("forward_s", st.forward_seconds);
            j.field("timing_runs", st.timing_runs).field("flops", st.counts.flops);
            j.field("token_out", m.tokenizer().piece(st.token_out));
            j.field("backend", st.backend).field("device", st.device);
            j.end_object();
            j.end_object();
            for (std::size_t i = 0; i < ops.size(); ++i) {
                const OpRecord& o = st.ops.ops[i];
                j.begin_object();
                j.field("ph", "X").field("cat", "op").field("pid", kPid).field("tid", tid);
                j.field("name", op_kind_name(o.kind));
                j.field("ts", ops[i].ts).field("dur", ops[i].dur);
                j.key("args").begin_object();
                j.field("step", st.index).field("op", static_cast<int>(i)).field("layer", o.layer);
                j.key("in").begin_array().value(o.in.rows).value(o.in.features).end_array();
                j.key("out").begin_array().value(o.out.rows).value(o.out.features).end_array();
                j.field("flops", o.flops).field("measured", ops[i].measured);
                if (o.timed_with >= 0) j.field("timed_with", o.timed_with);
                j.end_object();
                j.end_object();
            }
            t = end;
        }
    }
    j.end_array();
    j.field("displayTimeUnit", "ms");
    j.key("otherData").begin_object();
    j.field("model", m.name()).field("program", r.program).field("version", r.version);
    j.field("date", r.date).field("backend", r.backend).field("device", r.device);
    j.field("host", r.host).field("timing_runs", r.timing_runs);
    j.end_object();
    j.end_object();
    os << '\n';
}

}  // namespace kvs
