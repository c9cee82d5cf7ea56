#include "cmdline/engine_options.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "core/model/compact_weights.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/text_file.h"
#include "kernels/backend_factory.h"

namespace kvs::cmdline {
namespace {

std::string backend_problem(const std::string& name) {
    if (is_backend_name(name)) return {};
    return "unknown backend '" + name + "' (choose " + backend_choices() + ")";
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : " | ") + n;
    return s;
}

std::string weights_problem(const std::string& name) {
    try {
        weight_type_from_name(name);
        return {};
    } catch (const Error& e) {
        const std::string why = e.what();
        const std::string own = "--weights: ";
        return why.rfind(own, 0) == 0 ? why.substr(own.size()) : why;
    }
}

// A whole number with an optional K, M or G (powers of 1024), 1 KiB to 1 TiB; nullopt otherwise.
std::optional<std::uint64_t> trace_budget_bytes(std::string v) {
    int shift = 0;
    if (!v.empty()) {
        const char u = v.back();
        shift = u == 'K' || u == 'k'   ? 10
                : u == 'M' || u == 'm' ? 20
                : u == 'G' || u == 'g' ? 30
                                       : 0;
        if (shift) v.pop_back();
    }
    const std::uint64_t n =
        v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 13
            ? 0
            : std::stoull(v);
    // The count against the bound before it is shifted: 17179869185G << 30 wraps to 1 GiB.
    constexpr std::uint64_t kMost = std::uint64_t(1) << 40;
    const std::uint64_t bytes = n <= (kMost >> shift) ? n << shift : 0;
    if (n == 0 || bytes < 1024 || bytes > kMost) return std::nullopt;
    return bytes;
}

std::string trace_budget_problem(const std::string& v) {
    if (trace_budget_bytes(v)) return {};
    return "'" + v + "' is not a size from 1K to 1024G (e.g. 512K, 256M)";
}

// generate's --cache: a view of one session; the two-session views are other commands'.
std::string one_session_cache_problem(const std::string& v) {
    if (v == "on" || v == "off") return {};
    if (v == "compare")
        return "'compare' runs two sessions: kvscope-cli compare runs them side by side";
    if (v == "bidirectional")
        return "'bidirectional' runs two sessions: kvscope-cli mask runs causal and bidirectional "
               "side by side";
    return "'" + v + "' is not one of on, off";
}

// The cache views' words, as core names them.
std::vector<std::string> cache_words() {
    std::vector<std::string> w;
    for (CacheView c :
         {CacheView::On, CacheView::Off, CacheView::Compare, CacheView::Bidirectional})
        w.push_back(cache_view_name(c));
    return w;
}

}  // namespace

OptionSpec model_option() {
    return {
        "model",
        "M",
        "default (ours) | toy | stories260K | FILE.bin | FILE.gguf |\nHF folder | ORG/NAME[@REV] "
        "(the Hugging Face cache) |\nollama:NAME[:TAG] (Ollama's store)",
        false,
        {"-m"}};
}

OptionSpec weights_option() {
    return {.name = "weights",
            .value_name = "W",
            .help =
                "the weight matrices in that type (default: as the file\nstores them; a "
                "quantised GGUF stays compact)",
            .value = checked_by(weights_problem, joined(encodable_type_names()))};
}

std::vector<OptionSpec> model_options() {
    return {model_option(),
            {"tokenizer", "FILE", "llama2.c tokenizer (default: found beside the model)"},
            backend_option(),
            threads_option(),
            weights_option()};
}

OptionSpec backend_option() {
    return {.name = "backend",
            .value_name = "B",
            .help = "(default auto)",
            .value = checked_by(backend_problem, joined(backend_names()))};
}

OptionSpec threads_option() {
    return {.name = "threads",
            .value_name = "N",
            .help = "CPU backend threads (default 1; small ops stay on one)",
            .aliases = {"-t"},
            .value = whole_in(1, 256)};
}

OptionSpec prompt_option(const std::string& help) {
    return {"prompt", "TEXT", help, true, {"-p"}};
}

OptionSpec file_option() {
    return {"file", "FILE", "the prompt from a file (- reads standard input)", false, {"-f"}};
}

std::optional<std::string> prompt_from(const CommandLine& c) {
    if (c.has("prompt") && c.has("file"))
        c.fail("--prompt and --file both give a prompt: give one");
    if (c.has("prompt")) return c.str("prompt");
    if (!c.has("file")) return std::nullopt;
    constexpr std::size_t kLimit = std::size_t(16) << 20;
    const std::string path = c.str("file");
    std::string text;
    if (path == "-") {
        char buf[1 << 16];
        std::size_t n = 0;
        while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
            text.append(buf, n);
            if (text.size() > kLimit) c.fail("--file -: standard input holds more than 16 MiB");
        }
    } else {
        try {
            text = read_text_file(path, kLimit);
        } catch (const Error& e) {
            c.fail(std::string("--file: ") + e.what());
        }
    }
    if (path == "-") {
        try {
            text = std::string(utf8_text(text, "standard input"));
        } catch (const Error& e) {
            c.fail(std::string("--file -: ") + e.what());
        }
    }
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty() && text.back() == '\r') text.pop_back();
    return text;
}

OptionSpec new_tokens_option(const std::string& help, int most) {
    return {.name = "max-new-tokens",
            .value_name = "N",
            .help = help,
            .aliases = {"-n", "--n-predict"},
            .value = whole_in(1, most)};
}

std::vector<OptionSpec> cache_options(bool with_compare) {
    return {
        {.name = "cache",
         .value_name = "MODE",
         .help = with_compare ? "the KV cache on, off, both side by side (compare), or\n"
                                "causal and bidirectional side by side, both without it\n"
                                "(default on)"
                              : "decode with the KV cache, or recompute every row\n(default on)",
         .value = with_compare ? one_of(cache_words())
                               : checked_by(one_session_cache_problem, "on | off")},
        {"no-cache", "", "", false, {}, true}};
}

CacheView cache_from(const CommandLine& c, CacheView fallback) {
    if (c.has("cache") && c.has("no-cache") && c.str("cache") != "off")
        c.fail("--no-cache and --cache " + c.str("cache") + " disagree");
    if (c.has("no-cache")) return CacheView::Off;
    if (!c.has("cache")) return fallback;
    const auto v = parse_cache_view(c.checked("cache", {}));  // the option's own rule first
    if (!v) c.fail("--cache: " + value_problem(one_of(cache_words()), c.str("cache")));
    return *v;
}

std::vector<OptionSpec> sampler_options() {
    return {{.name = "temperature",
             .value_name = "T",
             .help = "(0 = greedy; default 0)",
             .aliases = {"--temp"},
             .value = number_in(0, 100)},
            {.name = "top-k",
             .value_name = "K",
             .help = "keep the K most likely tokens (0 = off; default 0)",
             .value = whole_in(0, 1 << 20)},
            {.name = "top-p",
             .value_name = "P",
             .help = "nucleus sampling mass (default 0.9; used when T > 0)",
             .value = number_in(0, 1)},
            {.name = "seed",
             .value_name = "S",
             .help = "random seed (default 42)",
             .aliases = {"-s"},
             .value = any_unsigned()}};
}

SamplerConfig sampler_from(const CommandLine& c) {
    SamplerConfig s;
    s.temperature = static_cast<float>(c.number("temperature", s.temperature));
    s.top_k = c.integer("top-k", s.top_k);
    s.top_p = static_cast<float>(c.number("top-p", s.top_p));
    s.seed = c.unsigned_integer("seed", s.seed);
    return s;
}

std::vector<OptionSpec> trace_budget_options(const std::string& default_words) {
    return {{.name = "trace-budget",
             .value_name = "SIZE",
             .help = "memory for the steps' payloads, bytes or with K, M, G\n(default " +
                     default_words + "); past it the oldest steps keep only their numbers",
             .value = checked_by(trace_budget_problem, "1K..1024G")},
            {.name = "trace-budget-mib",
             .value_name = "N",
             .help = "",
             .hidden = true,
             .value = whole_in(1, 1 << 20)},
            {.name = "trace-budget-kib",
             .value_name = "K",
             .help = "",
             .hidden = true,
             .value = whole_in(1, 1 << 30)}};
}

std::size_t trace_budget_from(const CommandLine& c, std::size_t fallback) {
    const int given = int(c.has("trace-budget")) + int(c.has("trace-budget-mib")) +
                      int(c.has("trace-budget-kib"));
    if (given > 1)
        c.fail(
            "--trace-budget is given twice (--trace-budget-mib and -kib are its older spellings)");
    if (c.has("trace-budget-mib")) return std::size_t(c.integer("trace-budget-mib", 0)) << 20;
    if (c.has("trace-budget-kib")) return std::size_t(c.integer("trace-budget-kib", 0)) << 10;
    if (!c.has("trace-budget")) return fallback;
    const std::string why = trace_budget_problem(c.str("trace-budget"));
    if (!why.empty()) c.fail("--trace-budget: " + why);
    return static_cast<std::size_t>(
        std::min<std::uint64_t>(*trace_budget_bytes(c.str("trace-budget")), SIZE_MAX));
}

OptionSpec context_option(const std::string& help, int most) {
    return {.name = "context",
            .value_name = "N",
            .help = help,
            .aliases = {"-c", "--ctx-size"},
            .value = whole_in(1, most)};
}

OptionSpec verbose_option() {
    return {"verbose", "", "say more: why no GPU was used, where files were found"};
}

OptionSpec timing_option(int default_runs) {
    const std::string d =
        default_runs == 1 ? "default 1: one run" : "default " + std::to_string(default_runs);
    return {.name = "timing-runs",
            .value_name = "N",
            .help = "time each step under 10 ms as the median of N runs of it\n(" + d +
                    "; more up to 9 when most runs were slowed\nby the machine; 1 = one run)",
            .value = whole_in(1, 100)};
}

WeightsWanted weights_from(const CommandLine& c) {
    if (!c.has("weights")) return std::nullopt;
    return weight_type_from_name(c.checked("weights", {}));
}

int threads_from(const CommandLine& c) {
    return c.integer("threads", 1);
}

std::string backend_from(const CommandLine& c, const std::string& fallback) {
    return c.checked("backend", fallback);
}

int timing_runs_from(const CommandLine& c, int fallback) {
    return c.integer("timing-runs", fallback);
}

}  // namespace kvs::cmdline
