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
        "tokens a session may hold (default: the model's context);\nthe KV cache is allocated "
        "for this many"));
    specs.push_back(cmdline::verbose_option());
    specs.push_back({.name = "gemm",
                     .value_name = "P",
                     .help = "matmuls of more than one row on a GPU (cuBLAS; default\nfp32; tf32 "
                             "and bf16 on tensor cores, float32 in and out)",
                     .value = cmdline::one_of({"fp32", "tf32", "bf16"})});
    return specs;
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
    GemmPrecision gemm = GemmPrecision::F32;
    if (a.has("gemm") && !gemm_precision_from_name(a.checked("gemm", {}), gemm))
        a.fail("--gemm: '" + a.str("gemm") + "' is not one of fp32, tf32, bf16");
    if (const std::string note = set_gemm(*o.backend.backend, gemm); !note.empty())
        o.backend.note += "; " + note;
    OpenLimits limits;
    limits.context = a.integer("context", 0);
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
    const int n = a.integer("max-new-tokens", fallback);
    if (n > allowed)
        throw Error("--max-new-tokens " + std::to_string(n) +
                    " is beyond the context: the prompt is " + std::to_string(prompt.size()) +
                    " tokens and the context " + std::to_string(m.config().seq_len) +
                    ", so at most " + std::to_string(allowed) + " new tokens");
    return n;
}

}  // namespace kvs::cli
