// kvscope-cli serve: many prompts through one paged KV cache (core/serving/scheduler.h), each
// printed as generate prints it, and what the cache cost.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "core/serving/prompt_file.h"
#include "core/serving/serve_run.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/utf8.h"

namespace kvs::cli {
namespace {

// The prompts of FILE, each with its arrival step (core/serving/prompt_file.h); a file that
// cannot be read, a line that is not an arrival and a prompt, or no prompt is the option's error.
std::vector<PromptLine> read_prompts(const Args& a) {
    try {
        return read_prompt_file(a.str("prompts"));
    } catch (const Error& e) {
        std::string why = "--prompts ";
        why += e.what();
        a.fail(why);
    }
}

// A request's text as generate prints it: the prompt's pieces (BOS left out), then each token
// generated, the end token left out.
void print_text(const Tokenizer& tok, const ServeRequest& r) {
    TerminalText screen;
    const auto& ids = r.tokens;
    const std::size_t first = tok.bos() >= 0 && ids[0] == tok.bos() ? 1 : 0;
    const std::size_t end = ids.size() - (r.finish == FinishReason::EndToken ? 1 : 0);
    std::string text;
    for (std::size_t i = first; i < end; ++i)
        text += screen.feed(tok.printable(i > 0 ? ids[i - 1] : -1, ids[i]));
    text += screen.finish() + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
}

KvCacheType cache_type_from(const Args& a) {
    if (!a.has("cache-type")) return KvCacheType::F32;
    const std::string t = a.checked("cache-type", "f32");
    if (const auto k = kv_cache_type_named(t)) return *k;
    a.fail("--cache-type " + escape_for_one_line(t) + ": not a cache type (f32, int8 or fp8)");
}

// Each request's tokens again through the float32 cache and the quantised one, side by side.
void print_cache_type_effect(const Model& m, Backend& be, const ServeRun& run) {
    const ServeConfig& cfg = run.config;
    const CacheEffect all = serve_cache_type_effect(m, be, run);
    const ServeStats& st = run.stats;
    std::fprintf(stderr,
                 "kvscope: %s cache against f32, on each request's tokens (teacher-forced): max "
                 "|logit difference| %.6g; the same most likely next token at %d of %d passes "
                 "(%.1f%%); a row of every layer's K and V takes %zu bytes (f32: %zu)\n",
                 kv_cache_type_name(cfg.cache_type), all.max_logit_difference, all.same_next_token,
                 all.passes, all.passes > 0 ? 100.0 * all.same_next_token / all.passes : 0.0,
                 st.bytes_per_row, std::size_t(m.config().kv_bytes_per_token()));
}

}  // namespace

std::vector<OptionSpec> serve_options() {
    using cmdline::whole_in;
    auto specs = model_options();
    for (auto& o : sampler_options()) specs.push_back(o);
    specs.insert(
        specs.end(),
        {{"prompts", "FILE",
          "the requests: one prompt a line (blank lines skipped); \"@N text\"\narrives at step N"},
         cmdline::new_tokens_option("tokens to generate per request (default 256, within the "
                                    "context)"),
         OptionSpec{.name = "block-size",
                    .value_name = "N",
                    .help = "K/V rows per block of the paged cache (default 16)",
                    .value = whole_in(1, 1 << 20)},
         OptionSpec{.name = "batch-limit",
                    .value_name = "N",
                    .help = "requests running at once (default 8)",
                    .value = whole_in(1, 64)},
         OptionSpec{
             .name = "pool-blocks",
             .value_name = "N",
             .help = "blocks in the pool (default: batch limit x the context's blocks);\na smaller "
                     "pool queues requests and preempts running ones (computed again later)",
             .value = whole_in(1, 1 << 24)},
         {"no-prefix-sharing", "", "compute every prompt's prefix itself, shared or not"},
         OptionSpec{
             .name = "window",
             .value_name = "N",
             .help = "a bounded cache: each pass sees the last N cached rows (and the sinks);\nthe "
                     "blocks before them are let go, and the effect on the next token is measured",
             .value = whole_in(1, 1 << 24)},
         OptionSpec{.name = "sinks",
                    .value_name = "N",
                    .help = "with --window: the first N rows stay seen too (attention sinks)",
                    .value = whole_in(0, 1 << 24)},
         OptionSpec{
             .name = "cache-type",
             .value_name = "TYPE",
             .help =
                 "how the pool stores K/V rows (default f32; int8 and fp8 (e4m3):\none scale per "
                 "row); the effect on the next token is measured against f32",
             .value = cmdline::one_of({kv_cache_type_name(KvCacheType::F32),
                                       kv_cache_type_name(KvCacheType::Int8),
                                       kv_cache_type_name(KvCacheType::Fp8)})}});
    return specs;
}

int cmd_serve(int argc, char** argv) {
    const Args a = model_args("serve", serve_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Serve many prompts at once over a paged KV cache (continuous batching, shared prefix "
            "blocks), printing each request's text as generate does; a summary goes to "
            "stderr.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    if (!a.has("prompts")) a.fail("--prompts FILE is required (one prompt a line)");
    const std::vector<PromptLine> prompts = read_prompts(a);
    ServeConfig cfg;
    cfg.block_size = a.integer("block-size", 16);
    cfg.batch_limit = a.integer("batch-limit", 8);
    cfg.pool_blocks = a.integer("pool-blocks", 0);
    cfg.prefix_sharing = !a.has("no-prefix-sharing");
    cfg.max_new_tokens = a.integer("max-new-tokens", 256);
    cfg.sampler = sampler_from(a);
    cfg.window = a.integer("window", 0);
    cfg.sinks = a.integer("sinks", 0);
    if (a.has("sinks") && !a.has("window")) a.fail("--sinks N needs --window N");
    cfg.cache_type = cache_type_from(a);
    Opened o = open_from(a);
    const Model& m = *o.model;
    std::vector<std::vector<int>> tokens;
    std::vector<int> arrivals;
    for (const PromptLine& p : prompts) {
        tokens.push_back(m.tokenizer().encode(p.text));
        arrivals.push_back(p.arrival);
    }
    ProgressLine progress("kvscope-cli serve");
    const ServeRun run =
        run_serve(m, *o.backend.backend, cfg, tokens, arrivals, [&](const ServeProgress& p) {
            if (!progress.due()) return;
            progress.show(std::to_string(p.finished) + " of " + std::to_string(p.requests) +
                          " requests done, " + std::to_string(p.generated) +
                          " tokens generated, step " + std::to_string(p.step));
        });
    progress.clear();
    for (const ServeRequest& r : run.requests) print_text(m.tokenizer(), r);
    std::fflush(stdout);

    const ServeStats& st = run.stats;
    const double block_bytes = double(st.bytes_per_row) * st.block_size;
    std::fprintf(
        stderr,
        "kvscope: serve: %s (%s, %s KV cache), %zu requests in %zu steps, %d tokens generated; "
        "blocks in the pool: %d of %d rows (%s); peak blocks used: %d (%s); internal "
        "fragmentation: %.1f%% "
        "(slots allocated but unused, summed over every step); prefix blocks shared: %d "
        "(+%d partly filled, %d copies on write; %d prompt rows not computed again); %.1f "
        "tokens per second (generated tokens / the steps' summed wall time, forward passes and "
        "sampling, steady clock, one run); a contiguous cache per request would reserve %d "
        "requests x %d rows = %.0f blocks (%s), %.0f blocks more than the peak; queued: %d "
        "requests; preempted: %d times; steps with prefill and decode rows in one pass: %d\n",
        escape_for_one_line(m.name()).c_str(), o.backend.backend->device().c_str(),
        kv_cache_type_name(cfg.cache_type), run.requests.size(), run.steps.size(), st.generated,
        st.pool_blocks, st.block_size, format_bytes(block_bytes * st.pool_blocks).c_str(),
        st.peak_blocks, format_bytes(block_bytes * st.peak_blocks).c_str(),
        st.fragmentation_percent(), st.shared_full_blocks, st.shared_partial_blocks,
        st.copies_on_write, st.shared_rows, st.tokens_per_second(), st.peak_running, st.context,
        st.contiguous_blocks(),
        format_bytes(double(st.bytes_per_row) * st.contiguous_rows()).c_str(), run.blocks_saved(),
        st.queued_requests, st.preemptions, run.mixed_steps);
    if (cfg.window > 0) {
        // Each request's tokens again through the full cache and the bounded one, side by side.
        const CacheEffect all = serve_window_effect(m, *o.backend.backend, run);
        std::fprintf(stderr,
                     "kvscope: window of %d rows and %d sinks against the full cache, on each "
                     "request's tokens (teacher-forced): max |logit difference| %.6g; the same "
                     "most likely next token at %d of %d passes (%.1f%%)\n",
                     cfg.window, cfg.sinks, all.max_logit_difference, all.same_next_token,
                     all.passes, all.passes > 0 ? 100.0 * all.same_next_token / all.passes : 0.0);
    }
    if (cfg.cache_type != KvCacheType::F32) print_cache_type_effect(m, *o.backend.backend, run);
    return 0;
}

}  // namespace kvs::cli
