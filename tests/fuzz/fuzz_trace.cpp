// Fuzz target: arbitrary bytes as a trace JSON -> read_trace_json (a replay's reader). Every
// refusal is one line naming the file; a trace that reads is one every view can be built from
// (the attention matrix of each step, layer and head, Inside attention of each row, the CSV and
// trace-event exports) and, written again, reads again with the same steps and tokens.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "core/session/attention_explain.h"
#include "core/session/attention_matrix.h"
#include "core/session/trace_csv.h"
#include "core/session/trace_events.h"
#include "core/session/trace_reader.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_check.h"

using namespace kvs;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    RecordedRun run;
    try {
        run = read_trace_json(text, "fuzz.json");
    } catch (const Error& e) {
        const std::string m = e.what();
        FUZZ_CHECK(m.rfind("fuzz.json: ", 0) == 0);
        FUZZ_CHECK(m.find('\n') == std::string::npos);
        return 0;
    }
    const ModelConfig& c = run.model->config();
    for (const RecordedSession& s : run.sessions) {
        const auto& steps = s.trace.steps();
        for (int k = 0; k < static_cast<int>(steps.size()); ++k) {
            const AttentionMatrixRows m = collect_attention_rows(steps, k);
            for (int l = 0; l < m.n_layers; ++l)
                for (int h = 0; h < m.n_heads; ++h)
                    for (int q = 0; q < m.n; ++q)
                        for (int key = 0; key <= q; ++key) (void)attention_cell(m, l, h, q, key);
            for (int l = 0; l < c.n_layers; ++l)
                for (int h = 0; h < c.n_heads; ++h)
                    for (int row = 0; row < steps[k].attention.rows; ++row) {
                        std::string why;
                        (void)explain_attention(s.trace, c, k, l, h, row, &why);
                    }
        }
    }
    const TraceJsonRun view = run.view();
    std::ostringstream events, csv, json;
    write_trace_events(events, view);
    write_steps_csv(csv, view);
    write_trace_json(json, view);
    const RecordedRun again = read_trace_json(json.str(), "again.json");  // must not throw
    FUZZ_CHECK(again.sessions.size() == run.sessions.size());
    for (std::size_t i = 0; i < run.sessions.size(); ++i) {
        FUZZ_CHECK(again.sessions[i].tokens == run.sessions[i].tokens);
        FUZZ_CHECK(again.sessions[i].trace.steps().size() == run.sessions[i].trace.steps().size());
    }
    return 0;
}
