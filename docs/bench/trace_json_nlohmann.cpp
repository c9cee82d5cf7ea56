// Measures the trace JSON of a 20,000-step soak two ways (docs/decisions.md, "Trace JSON"):
//   writer:   core/session/trace_json.cpp (JsonWriter, streaming) for each session's whole trace;
//   nlohmann: the same document as an nlohmann::json tree (what an nlohmann writer holds before
//             it can dump), then dump(). The tree is built by parsing the writer's text, which is
//             not timed; the timed part is copying the tree (one allocation per node, as building
//             it from the trace would be) and dump(): a lower bound on an nlohmann writer's time.
// Build (from the repo root, after building kvscope_kernels):
//   g++ -O2 -std=c++20 -I. docs/bench/trace_json_nlohmann.cpp build/kernels/libkvscope_kernels.a
//       -Wl,--start-group build/core/*/libkvscope_core_*.a -Wl,--end-group -o /tmp/trace_json_bench
// Run: /usr/bin/time -v /tmp/trace_json_bench writer|nlohmann MODEL STEPS
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/session/trace_json.h"
#include "kernels/backend_factory.h"

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    const std::string mode = argv[1];
    const int total = std::atoi(argv[3]);
    auto m = kvs::open_model(argv[2], "");
    kvs::BackendChoice be = kvs::make_backend("cpu", 1);
    kvs::SessionConfig cfg;  // as `kvscope-cli soak`: 4 MiB budget, one timing run
    cfg.trace_budget = std::size_t(4096) << 10;
    cfg.timing.runs = 1;
    cfg.sampler.temperature = 1;
    cfg.stop_at_end_token = false;  // each session to the context limit, as the soak
    kvs::Session s(*m, *be.backend, cfg);
    double timed = 0;
    std::size_t bytes = 0;
    int steps = 0, sessions = 0;
    const char* prompts[] = {"Once upon a time", "Lily", "The cat sat"};
    while (steps < total) {
        cfg.sampler.seed = 42 + sessions;
        s.set_sampler(cfg.sampler);
        s.set_prompt(prompts[sessions % 3]);
        ++sessions;
        while (!s.finished() && steps < total)
            if (s.step().phase == kvs::Phase::Decode) ++steps;
        std::ostringstream os;
        auto t0 = std::chrono::steady_clock::now();
        kvs::write_trace_json(os, s);
        std::string text = os.str();
        if (mode == "writer") {
            timed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            bytes += text.size();
            continue;
        }
        const nlohmann::json parsed = nlohmann::json::parse(text);
        text.clear();
        text.shrink_to_fit();
        t0 = std::chrono::steady_clock::now();
        const nlohmann::json tree = parsed;  // one allocation per node
        const std::string out = tree.dump();
        timed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        bytes += out.size();
    }
    std::printf("%s: %d sessions, %d decode steps, %zu JSON bytes, %.3f s serialising\n",
                mode.c_str(), sessions, steps, bytes, timed);
}
