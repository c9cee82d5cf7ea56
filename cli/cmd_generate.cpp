#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "cli/run_outputs.h"
#include "core/session/trace_json.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/output_file.h"
#include "core/util/utf8.h"

namespace kvs::cli {

namespace {

// Cached decode steps on a GPU backend: each path's forward time and kernel launches, over the
// steps that ran or measured it, and the path the last step ran.
struct PathSum {
    int steps = 0;
    double seconds = 0;
    long long kernels = 0;
    void add(double s, int k) { ++steps, seconds += s, kernels += k; }
};
struct DecodePaths {
    PathSum per_op, graph, fused;
    PassPath ran = PassPath::PerOp;
    void add(const StepRecord& r) {
        ran = r.path;
        if (r.kernel_launches > 0 && r.path == PassPath::PerOp)
            per_op.add(r.forward_seconds, r.kernel_launches);
        if (r.graph_seconds > 0) graph.add(r.graph_seconds, r.graph_kernel_launches);
        if (r.fused_seconds > 0) fused.add(r.fused_seconds, r.fused_kernel_launches);
    }
};

// A GPU backend (its kernels counted): which path the decode steps ran, and each path's mean
// forward time and kernel launches per decode token. Nothing on a backend that counts none.
void print_decode_paths(const DecodePaths& d, bool one_graph) {
    if (d.per_op.steps + d.graph.steps + d.fused.steps == 0) return;
    std::string paths;
    const auto say = [&](const char* name, const PathSum& p) {
        if (p.steps == 0) return;
        char b[160];
        std::snprintf(b, sizeof b, "%s%s %.3f ms, %lld kernel launches per decode token",
                      paths.empty() ? "" : "; ", name, p.seconds / p.steps * 1e3,
                      p.kernels / p.steps);
        paths += b;
    };
    say("op by op", d.per_op);
    say("graph", d.graph);
    say("fused", d.fused);
    std::fprintf(stderr, "kvscope: decode steps ran %s%s; forward pass, mean of %d steps: %s\n",
                 d.ran == PassPath::PerOp   ? "op by op, every op timed"
                 : d.ran == PassPath::Fused ? "fused"
                                            : "as one CUDA graph",
                 d.ran == PassPath::Fused && one_graph ? ", one CUDA graph a step" : "",
                 std::max({d.per_op.steps, d.graph.steps, d.fused.steps}), paths.c_str());
}

}  // namespace

std::vector<OptionSpec> generate_options() {
    auto specs = model_options();
    for (auto& o : sampler_options()) specs.push_back(o);
    specs.push_back(timing_option(1));
    specs.insert(
        specs.end(),
        {prompt_option("prompt text (default empty: BOS only)"),
         cmdline::file_option(),
         cmdline::new_tokens_option("tokens to generate (default 256, within the context)"),
         {"prefill-token-by-token", "", "feed the prompt one token per forward pass"},
         {"op-times", "",
          "run each decode step op by op, every op timed (the teaching path);\non a GPU backend "
          "the graph and fused paths are timed beside it"}});
    for (auto& o : cmdline::cache_options(false)) specs.push_back(o);
    for (auto& o : run_output_options()) specs.push_back(o);
    return specs;
}

int cmd_generate(int argc, char** argv) {
    const Args a = model_args("generate", generate_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Generate text, printing it as llama2.c's run.c does; a summary goes to "
            "stderr.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    const CacheView cache = cmdline::cache_from(a, CacheView::On);  // on or off: the rule's
    const std::string prompt = cmdline::prompt_from(a).value_or("");
    Opened o = open_from(a);
    const Model& m = *o.model;
    const auto prompt_ids = m.tokenizer().encode(prompt);

    SessionConfig cfg;
    cfg.sampler = sampler_from(a);
    cfg.timing = timing_from(a, 1);  // one run per step, as run.c and llama-cli time theirs
    cfg.mode = cache == CacheView::Off ? CacheMode::Uncached : CacheMode::Cached;
    cfg.prefill_token_by_token = a.has("prefill-token-by-token");
    cfg.max_new_tokens = max_new_from(a, m, prompt_ids, 256);
    // Checked now, after the model and tokenizer were read (so they count as inputs), and
    // written at the end through a temporary file: a killed run leaves an old trace as it was.
    const RunOutputs out = run_outputs_from(a, m.config());
    // The session keeps only what this command writes: everything for --trace-json; otherwise
    // the text and the summary, which read none of the per-step payloads. Each kept payload is
    // memory the trace grows by at every step, and on a guest where a fresh page costs 14 us
    // (docs/bench) the op strip and the q rows alone (about 7 KiB a step on stories260K) made the
    // loop twice the forward pass. Decode steps take the backend's fastest path (on a GPU the
    // fused kernels, one CUDA graph a step) unless --op-times asks for every op's time: then they
    // run op by op, and the session times the fast paths beside them for the summary.
    const bool op_times = a.has("op-times");
    cfg.capture.attention = out.wants_attention();
    cfg.capture.kv_rows = out.wants_everything();
    cfg.capture.vectors = out.wants_everything();
    cfg.capture.projections = out.wants_everything();
    cfg.capture.op_log = out.wants_ops() || op_times;
    cfg.capture.time_each_op = op_times;
    cfg.keep_logits = out.wants_everything();
    Session s(m, *o.backend.backend, cfg);
    s.set_prompt_tokens(prompt_ids);

    const Tokenizer& tok = m.tokenizer();
    const auto& ids = s.tokens();
    // Pieces come from the tokenizer file: escape sequences in them must not drive the terminal.
    TerminalText screen;
    auto put = [&](std::size_t i) {
        const std::string p = screen.feed(tok.printable(i > 0 ? ids[i - 1] : -1, ids[i]));
        std::fwrite(p.data(), 1, p.size(), stdout);
    };
    const std::size_t first = tok.bos() >= 0 && ids[0] == tok.bos() ? 1 : 0;
    double prefill_s = 0, decode_s = 0;
    int decode_steps = 0;
    DecodePaths paths;
    // The whole loop from the first decode step to the last token printed, as run.c times its
    // own: the forward passes, sampling, the trace's bookkeeping and the text written.
    using Clock = std::chrono::steady_clock;
    Clock::time_point loop_t0 = Clock::now();
    while (!s.finished()) {
        const StepRecord& r = s.step();
        if (r.phase == Phase::Prefill) {
            prefill_s = r.wall_seconds;
            for (std::size_t i = first; i < static_cast<std::size_t>(s.prompt_len()); ++i) put(i);
            loop_t0 = Clock::now();
        } else {
            decode_s += r.wall_seconds;
            ++decode_steps;
            paths.add(r);
        }
        if (s.finish_reason() != FinishReason::EndToken) put(s.tokens().size() - 1);
        std::fflush(stdout);
    }
    const double loop_s = std::chrono::duration<double>(Clock::now() - loop_t0).count();
    std::fputs((screen.finish() + "\n").c_str(), stdout);
    const std::string stopped = stopped_words(s);

    std::fprintf(stderr,
                 "kvscope: %s (%s), %s; %d prompt tokens, %d new; prefill %.3f ms; decode %.1f "
                 "tok/s (%s), %.1f tok/s with the loop; stopped: %s; KV cache %s\n",
                 escape_for_one_line(m.name()).c_str(), o.backend.backend->device().c_str(),
                 o.backend.note.c_str(), s.prompt_len(), s.generated(), prefill_s * 1e3,
                 decode_steps > 0 && decode_s > 0 ? decode_steps / decode_s : 0.0,
                 mode_name(cfg.mode), decode_steps > 0 && loop_s > 0 ? decode_steps / loop_s : 0.0,
                 stopped.c_str(),
                 format_bytes(static_cast<double>(s.runner().kv().bytes())).c_str());
    std::fprintf(stderr, "kvscope: timed: %s\n", timing_words(cfg.timing).c_str());
    print_decode_paths(paths, s.runner().records_graphs());
    TraceJsonRun run;
    run.model = &m;
    run.sampler = cfg.sampler;
    run.recorded = recorded_here("kvscope-cli generate", o.backend.backend->name(),
                                 o.backend.backend->device(), cfg.timing.runs);
    run.sessions.push_back(trace_json_session(s));
    write_run_outputs(out, run);
    return 0;
}

}  // namespace kvs::cli
