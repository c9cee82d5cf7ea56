#pragma once
// What the model fuzz targets (checkpoint, GGUF, Hugging Face) do with whatever parsed: the
// prompt "a a" and up to three steps on the CPU backend, every chosen token checked against the
// vocabulary and the cache against the context, then the trace written as JSON.
#include <sstream>

#include "core/model/model.h"
#include "core/session/session.h"
#include "core/session/trace_json.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/fuzz/fuzz_check.h"

namespace kvs::fuzz {

// Each step timed once: a short step is otherwise run again as many times as its measured times
// ask for (core/session/step_timing.h), and the inputs a fuzz run finds would depend on the
// machine's load, not only on the seed (scripts/fuzz.sh's check must give one answer).
inline SessionConfig timed_once(SessionConfig cfg) {
    cfg.timing.runs = 1;
    return cfg;
}

inline void run_a_few_steps(const Model& m, const SessionConfig& cfg = {}) {
    const ModelConfig& c = m.config();
    CpuBackend backend(false);
    Session s(m, backend, timed_once(cfg));
    try {
        s.set_prompt("a a");
    } catch (const Error&) {
        return;  // the context is shorter than the prompt
    }
    for (int i = 0; i < 3 && !s.finished(); ++i) {
        const StepRecord& r = s.step();
        FUZZ_CHECK(r.token_out >= 0 && r.token_out < c.vocab_size);
        FUZZ_CHECK(r.kv.len <= c.seq_len);
    }
    std::ostringstream json;
    write_trace_json(json, s);
    FUZZ_CHECK(!json.str().empty());
}

}  // namespace kvs::fuzz
