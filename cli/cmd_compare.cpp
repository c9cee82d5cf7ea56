#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/run_outputs.h"
#include "core/session/workbench.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/utf8.h"

namespace kvs::cli {

std::vector<OptionSpec> compare_options() {
    auto specs = model_options();
    for (auto& o : sampler_options()) specs.push_back(o);
    specs.push_back(timing_option());
    specs.insert(specs.end(), {prompt_option("prompt text (default empty: BOS only)"),
                               cmdline::file_option(),
                               cmdline::new_tokens_option("tokens to generate (default 64)"),
                               {"quiet", "", "totals only, no per-step rows"}});
    for (auto& o : run_output_options()) specs.push_back(o);
    return specs;
}

// The same prompt and sampler run twice, with the KV cache and without, step for step.
int cmd_compare(int argc, char** argv) {
    const Args a = model_args("compare", compare_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Run the same generation with and without the KV cache and compare time, "
            "counted FLOPs and logits.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    const std::string prompt = cmdline::prompt_from(a).value_or("");
    Opened o = open_from(a);
    const std::shared_ptr<const Model> model = std::move(o.model);
    const Model& m = *model;
    const RunOutputs out = run_outputs_from(a, m.config());
    SessionConfig cfg;
    cfg.sampler = sampler_from(a);
    cfg.timing = timing_from(a);
    cfg.max_new_tokens = max_new_from(a, m, m.tokenizer().encode(prompt), 64);
    cfg.capture.attention = out.wants_attention();
    cfg.capture.kv_rows = out.wants_everything();
    cfg.capture.vectors = out.wants_everything();
    cfg.capture.projections = out.wants_everything();
    cfg.capture.op_log = out.wants_ops();
    cfg.keep_logits = true;  // the logit difference between the sessions
    Workbench workbench(*o.backend.backend, cfg);
    workbench.set_view(CacheView::Compare);
    workbench.open(model, {});
    workbench.set_prompt(prompt);  // empty: BOS alone
    const Session& cached = workbench.session(0);
    const Session& uncached = workbench.session(1);

    const bool quiet = a.has("quiet");
    std::printf("model %s on %s (%s)\n", escape_for_one_line(m.name()).c_str(),
                o.backend.backend->device().c_str(), o.backend.note.c_str());
    if (!quiet)
        std::printf("%5s %-8s %7s %7s %12s %12s %12s %12s %10s %10s\n", "step", "phase", "rows_c",
                    "rows_u", "ms_cached", "ms_uncached", "MFLOP_c", "MFLOP_u", "kv_bytes",
                    "max|dlog|");
    double tc = 0, tu = 0, fc = 0, fu = 0, max_diff = 0;
    int steps = 0, diverged_at = -1;
    while (!cached.finished() && !uncached.finished()) {
        workbench.step();
        const StepRecord& c = cached.trace().back();
        const StepRecord& u = uncached.trace().back();
        const double diff = workbench.logit_differences().back();
        if (!std::isnan(diff)) max_diff = std::max(max_diff, diff);
        if (c.token_out != u.token_out && diverged_at < 0) diverged_at = c.index;
        tc += c.wall_seconds;
        tu += u.wall_seconds;
        fc += c.counts.flops;
        fu += u.counts.flops;
        ++steps;
        if (!quiet)
            std::printf("%5d %-8s %7d %7d %12.4f %12.4f %12.3f %12.3f %10zu %10.2e\n", c.index,
                        phase_name(c.phase), c.tokens_processed, u.tokens_processed,
                        c.wall_seconds * 1e3, u.wall_seconds * 1e3, c.counts.flops / 1e6,
                        u.counts.flops / 1e6, c.kv.bytes(), diff);
    }
    std::printf(
        "total: %d steps (%d new tokens); time cached %.4f s, uncached %.4f s, ratio "
        "%.1fx; counted FLOPs cached %.4g, uncached %.4g, ratio %.1fx\n",
        steps, cached.generated(), tc, tu, tc > 0 ? tu / tc : 0.0, fc, fu, fc > 0 ? fu / fc : 0.0);
    std::printf("max |logit difference| cached vs uncached over all steps: %.3g\n", max_diff);
    if (diverged_at >= 0)
        std::printf("note: the chosen tokens differed first at step %d\n", diverged_at);
    std::printf("timed: %s\n", timing_words(cfg.timing).c_str());
    // The text as generate prints it (the pieces escaped for the terminal), and why it ended.
    const std::string text_c = cached.text(true), text_u = uncached.text(true);
    std::printf("text: %s\n", escape_for_terminal(text_c).c_str());
    if (text_u != text_c)
        std::printf("text without the cache: %s\n", escape_for_terminal(text_u).c_str());
    const std::string why_c = stopped_words(cached), why_u = stopped_words(uncached);
    if (why_c == why_u)
        std::printf("stopped: %s\n", why_c.c_str());
    else
        std::printf("stopped: %s (with the cache), %s (without)\n", why_c.c_str(), why_u.c_str());
    TraceJsonRun run;
    run.model = &m;
    run.sampler = cfg.sampler;
    run.recorded = recorded_here("kvscope-cli compare", o.backend.backend->name(),
                                 o.backend.backend->device(), cfg.timing.runs);
    run.sessions = {trace_json_session(cached), trace_json_session(uncached)};
    run.logit_max_diff = workbench.logit_differences();
    write_run_outputs(out, run);
    return 0;
}

}  // namespace kvs::cli
