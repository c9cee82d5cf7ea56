// kvscope-cli replay: a recorded run (trace JSON) read back without its model: where and on what
// it was recorded, the steps, the text and why it stopped, and the same files generate and
// compare write (CSV, trace events, the trace JSON again in this version).
#include <cmath>
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "cli/run_outputs.h"
#include "core/session/trace_reader.h"
#include "core/util/format.h"
#include "core/util/utf8.h"

namespace kvs::cli {

std::vector<OptionSpec> replay_options() {
    std::vector<OptionSpec> specs = {{.name = "trace",
                                      .value_name = "TRACE.json",
                                      .help = "the recorded run",
                                      .hidden = true}};  // given as the one word
    for (auto& o : run_output_options()) specs.push_back(o);
    return specs;
}

int cmd_replay(int argc, char** argv) {
    const Args a("replay", replay_options(), argc, argv, 2, "trace", "TRACE.json");
    if (a.help()) {
        std::fputs(
            "Read a recorded run (kvscope-cli generate/compare --trace-json, the window's "
            "export) without its model and print it; write it as CSV or trace events.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    if (!a.has("trace"))
        a.fail("which run? give the trace JSON file (kvscope-cli replay TRACE.json)");
    const std::string path = a.str("trace");
    RecordedRun run;
    {
        ProgressLine progress("kvscope-cli replay");
        run = read_trace_file(path, [&](std::uint64_t done, std::uint64_t total) {
            if (progress.due())
                progress.show(path + ": " + bytes_of(done, total) + " read" +
                              (done == total ? "; building the steps" : ""));
        });
    }
    const Model& m = *run.model;
    const RunOutputs out = run_outputs_from(a, m.config());
    const RecordedOn& r = run.recorded;
    std::printf(
        "recorded by %s %s on %s\n",
        r.program.empty() ? "kvscope" : escape_for_one_line(r.program).c_str(),
        escape_for_one_line(r.version).c_str(),
        r.date.empty() ? "(no date: a version 1 trace)" : escape_for_one_line(r.date).c_str());
    std::printf("model %s (%s) on %s (%s)%s%s; trace version %d\n",
                escape_for_one_line(m.name()).c_str(),
                escape_for_one_line(m.config().describe()).c_str(),
                escape_for_one_line(r.device).c_str(), escape_for_one_line(r.backend).c_str(),
                r.host.empty() ? "" : ", ", escape_for_one_line(r.host).c_str(), run.version);
    std::printf("%7s %5s %-8s %-8s %7s %12s %12s %10s  %s\n", "session", "step", "phase", "mode",
                "rows", "ms", "MFLOP", "kv_bytes", "token");
    for (std::size_t s = 0; s < run.sessions.size(); ++s)
        for (const StepRecord& st : run.sessions[s].trace.steps())
            std::printf("%7zu %5d %-8s %-8s %7d %12.4f %12.3f %10zu  %s\n", s, st.index,
                        phase_name(st.phase), mode_name(st.mode), st.tokens_processed,
                        st.wall_seconds * 1e3, st.counts.flops / 1e6, st.kv.bytes(),
                        escape_for_one_line(m.tokenizer().piece(st.token_out)).c_str());
    if (run.compare()) {
        double max_diff = 0;
        for (double d : run.logit_max_diff)
            if (!std::isnan(d)) max_diff = std::max(max_diff, d);
        std::printf("max |logit difference| cached vs uncached over all steps: %.3g\n", max_diff);
    }
    for (std::size_t s = 0; s < run.sessions.size(); ++s) {
        const RecordedSession& rs = run.sessions[s];
        const char* which = run.compare() ? (s == 0 ? " (with the cache)" : " (without)") : "";
        std::printf("text%s: %s\n", which, escape_for_terminal(rs.text).c_str());
        std::printf("stopped%s: %s\n", which,
                    rs.finish == FinishReason::None ? "not yet (the run was recorded mid-way)"
                                                    : finish_reason_name(rs.finish));
    }
    write_run_outputs(out, run.view());
    return 0;
}

}  // namespace kvs::cli
