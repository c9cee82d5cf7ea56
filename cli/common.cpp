#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "cli/commands.h"
#include "core/loaders/memory_budget.h"
#include "core/loaders/model_loader.h"
#include "core/util/error.h"

namespace kvs::cli {

std::vector<OptionSpec> model_options() {
    auto specs = cmdline::model_options();
    specs.push_back(cmdline::context_option(
        "tokens a session may hold, 1..131072 (default: the model's context);\nthe KV "
        "cache is allocated for this many"));
    specs.push_back(cmdline::verbose_option());
    return specs;
}

std::vector<OptionSpec> sampler_options() {
    return {{"temperature", "T", "0 = greedy (default 0)", false, {"--temp"}},
            {"top-k", "K", "keep the K most likely tokens (default 0 = off)"},
            {"top-p", "P", "nucleus sampling mass (default 0.9; used when T > 0)"},
            {"seed", "S", "random seed (default 42)", false, {"-s"}}};
}

SamplerConfig sampler_from(const Args& a) {
    SamplerConfig s;
    s.temperature = static_cast<float>(a.number("temperature", 0.0, 0.0, 100.0));
    s.top_k = a.integer("top-k", 0, 0, 1 << 20);
    s.top_p = static_cast<float>(a.number("top-p", 0.9, 0.0, 1.0));
    s.seed = a.unsigned_integer("seed", 42);
    return s;
}

TimingPolicy timing_from(const Args& a, int fallback_runs) {
    TimingPolicy t;
    t.runs = cmdline::timing_runs_from(a, fallback_runs);
    return t;
}

std::string timing_words(const TimingPolicy& t) {
    if (t.runs <= 1)
        return "each step run once, on the wall clock (--timing-runs N: the median of N runs of "
               "each step under 10 ms)";
    return "each step under " + std::to_string(int(t.rerun_below_seconds * 1e3)) +
           " ms as the median of " + std::to_string(t.runs) + " runs of it (up to " +
           std::to_string(std::max(t.runs, t.max_runs)) +
           " when most were slowed by the machine), longer steps once";
}

Opened open_from(const Args& a) {
    Opened o;
    o.backend = make_backend(backend_from(a, "auto"), threads_from(a));
    if (a.has("verbose") && !o.backend.detail.empty())
        o.backend.note += " (" + o.backend.detail + ")";
    OpenLimits limits;
    limits.context = a.integer("context", 0, 1, 1 << 17);
    limits.budgets = budgets_for(*o.backend.backend);
    o.model = open_model(a.str("model", "default"), a.str("tokenizer"), limits, weights_from(a));
    return o;
}

int max_new_from(const Args& a, const Model& m, const std::vector<int>& prompt, int fallback) {
    const int allowed = m.config().seq_len - static_cast<int>(prompt.size()) + 1;
    if (static_cast<int>(prompt.size()) > m.config().seq_len)
        throw Error("the prompt is " + std::to_string(prompt.size()) +
                    " tokens, longer than the model's context of " +
                    std::to_string(m.config().seq_len) + " tokens");
    if (!a.has("max-new-tokens")) return std::min(fallback, allowed);
    const int n = a.integer("max-new-tokens", fallback, 1, 1 << 24);
    if (n > allowed)
        throw Error("--max-new-tokens " + std::to_string(n) +
                    " is beyond the context: the prompt is " + std::to_string(prompt.size()) +
                    " tokens and the context " + std::to_string(m.config().seq_len) +
                    ", so at most " + std::to_string(allowed) + " new tokens");
    return n;
}

}  // namespace kvs::cli
