// kvscope-cli soak: many sessions back to back (new prompt, reset, run to the context limit),
// as a long lecture would, printing resident memory as it goes. It
// shows that the trace's memory budget holds (the payload never exceeds it after a decode step)
// and that resident memory stops growing once the budget is reached.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/proc_memory.h"
#include "core/util/error.h"
#include "core/util/utf8.h"

namespace kvs::cli {
namespace {

// What people paste: prose, Chinese, emoji, control characters, bytes that are not UTF-8.
const std::vector<std::string>& soak_prompts() {
    static const std::vector<std::string> p = {
        "Once upon a time",
        "\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c",   // 你好，世界
        "The cat \xf0\x9f\x98\x80 sat \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",  // emoji, skin tone
        "tab\there\r\nbell\x07 esc\x1b[31m",
        "\xff\xfe\xc3\x28 \xed\xa0\x80 \xf5\x80\x80\x80 junk",
        "Lily",
    };
    return p;
}

double mib(std::size_t kib) {
    return static_cast<double>(kib) / 1024.0;
}

}  // namespace

std::vector<OptionSpec> soak_options() {
    auto specs = model_options();
    specs.insert(
        specs.end(),
        {OptionSpec{.name = "max-new-tokens",
                    .value_name = "N",
                    .help = "decode steps in all, over as many sessions as needed (default 2000)",
                    .aliases = {"-n", "--n-predict", "--steps"},
                    .value = cmdline::whole_in(1, 100000000)},
         OptionSpec{.name = "report-every",
                    .value_name = "N",
                    .help = "print a line every N decode steps (default 200)",
                    .value = cmdline::whole_in(1, 100000000)},
         OptionSpec{.name = "temperature",
                    .value_name = "T",
                    .help = "sampling temperature (default 1: sessions differ)",
                    .aliases = {"--temp"},
                    .value = cmdline::number_in(0, 100)},
         OptionSpec{.name = "seed",
                    .value_name = "S",
                    .help = "seed of the first session; session i uses S + i (default 42)",
                    .aliases = {"-s"},
                    .value = cmdline::any_unsigned()},
         {"stop-at-end-token", "", "end a session at the end token, not at the context limit"}});
    for (auto& o : cmdline::trace_budget_options("4M")) specs.push_back(o);
    return specs;
}

int cmd_soak(int argc, char** argv) {
    const Args a = model_args("soak", soak_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Run sessions back to back (reset, new prompt, run to the end of the context) "
            "with the full trace, printing resident memory (VmRSS) and the trace payload "
            "against its budget.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    const int total = a.integer("max-new-tokens", 2000);
    const int every = a.integer("report-every", 200);
    const std::size_t budget = cmdline::trace_budget_from(a, std::size_t(4) << 20);
    SamplerConfig sampler;
    sampler.temperature = static_cast<float>(a.number("temperature", 1.0));
    const std::uint64_t seed0 = a.unsigned_integer("seed", 42);
    Opened o = open_from(a);
    const Model& m = *o.model;

    // Everything a view can show is recorded, as in the app.
    SessionConfig cfg;
    cfg.trace_budget = budget;
    cfg.timing.runs = 1;  // a memory soak: one run per step is enough
    cfg.sampler = sampler;
    // Each session runs to the context limit, the longest trace a session can have, unless
    // --stop-at-end-token.
    cfg.stop_at_end_token = a.has("stop-at-end-token");
    Session s(m, *o.backend.backend, cfg);

    std::printf("soak: %s on %s, %d decode steps, trace budget %zu KiB, context %d tokens\n",
                escape_for_one_line(m.name()).c_str(), o.backend.backend->device().c_str(), total,
                budget >> 10, m.config().seq_len);
    std::printf("%8s %8s %10s %10s %22s %8s\n", "steps", "session", "RSS MiB", "peak MiB",
                "trace payload KiB", "evicted");
    int steps = 0, sessions = 0, refused = 0, context_full = 0, end_token = 0, evicted = 0;
    std::size_t payload_max = 0, rss_warm = 0;
    int warm_at = -1;
    bool budget_reached = false;
    ProcMemory mem = read_proc_memory();
    for (std::size_t p = 0; steps < total; ++p) {
        const std::string& prompt = soak_prompts()[p % soak_prompts().size()];
        sampler.seed = seed0 + static_cast<std::uint64_t>(sessions);
        s.set_sampler(sampler);
        try {
            s.set_prompt(prompt);  // resets: cache emptied, trace cleared
        } catch (const Error&) {
            // A prompt this model cannot take (longer than a small context, words a toy model
            // does not know): the next one.
            if (++refused > static_cast<int>(soak_prompts().size()) && sessions == 0)
                throw Error("soak: the model refused every prompt");
            continue;
        }
        ++sessions;
        while (!s.finished() && steps < total) {
            const StepRecord& r = s.step();
            if (r.phase != Phase::Decode) continue;
            ++steps;
            payload_max = std::max(payload_max, s.trace().payload_bytes());
            budget_reached = budget_reached || s.trace().evicted_steps() > 0;
            if (steps % every != 0 && steps != total) continue;
            mem = read_proc_memory();
            // Warm-up: the budget has been reached and a quarter of the run is behind us.
            if (warm_at < 0 && budget_reached && steps * 4 >= total) {
                warm_at = steps;
                rss_warm = mem.rss_kib;
            }
            std::printf("%8d %8d %10.1f %10.1f %10.1f / %9.1f %8d\n", steps, sessions,
                        mib(mem.rss_kib), mib(mem.peak_kib), s.trace().payload_bytes() / 1024.0,
                        budget / 1024.0, s.trace().evicted_steps());
            std::fflush(stdout);
        }
        if (s.finished()) {
            context_full += s.finish_reason() == FinishReason::ContextFull;
            end_token += s.finish_reason() == FinishReason::EndToken;
        }
        evicted += s.trace().evicted_steps();
    }
    std::printf(
        "sessions: %d (context full %d, end token %d, cut by --steps %d); prompts refused: "
        "%d\n",
        sessions, context_full, end_token, sessions - context_full - end_token, refused);
    std::printf(
        "trace payload: at most %.1f KiB after a decode step, budget %.1f KiB; %d steps "
        "lost their payload\n",
        payload_max / 1024.0, budget / 1024.0, evicted);
    if (warm_at < 0) {
        std::printf(
            "resident memory: %.1f MiB at the end, peak %.1f MiB; no warm-up point "
            "(the budget was %s): use a larger -n or a smaller --trace-budget\n",
            mib(mem.rss_kib), mib(mem.peak_kib),
            budget_reached ? "reached only after the last report" : "never reached");
    } else {
        std::printf(
            "resident memory: %.1f MiB after warm-up (step %d), %.1f MiB at the end "
            "(%+.1f MiB), peak %.1f MiB\n",
            mib(rss_warm), warm_at, mib(mem.rss_kib), mib(mem.rss_kib) - mib(rss_warm),
            mib(mem.peak_kib));
    }
    // One line for scripts and tests.
    std::printf(
        "soak: steps=%d sessions=%d context_full=%d budget_bytes=%zu payload_max_bytes=%zu "
        "warm_step=%d "
        "rss_warm_kib=%zu rss_end_kib=%zu rss_peak_kib=%zu\n",
        steps, sessions, context_full, budget, payload_max, warm_at, rss_warm, mem.rss_kib,
        mem.peak_kib);
    return 0;
}

}  // namespace kvs::cli
