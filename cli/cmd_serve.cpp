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
#include "kernels/cpu/cpu_backend.h"

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

KvScaleMode scale_mode_from(const Args& a) {
    if (!a.has("cache-scales")) return KvScaleMode::Token;
    const std::string m = a.checked("cache-scales", "token");
    if (const auto k = kv_scale_mode_named(m)) return *k;
    a.fail("--cache-scales " + escape_for_one_line(m) +
           ": not a way to scale the cache (token, tensor or channel)");
}

SinkPositions sink_positions_from(const Args& a) {
    if (!a.has("sink-positions")) return SinkPositions::Cache;
    const std::string p = a.checked("sink-positions", "cache");
    for (SinkPositions k : {SinkPositions::Cache, SinkPositions::Original})
        if (p == sink_positions_name(k)) return k;
    a.fail("--sink-positions " + escape_for_one_line(p) + ": not cache or original");
}

// Each request's tokens again through the float32 cache and the quantised one, side by side.
void print_cache_type_effect(const Model& m, Backend& be, const ServeRun& run) {
    const ServeConfig& cfg = run.config;
    const CacheEffect all = serve_cache_type_effect(m, be, run);
    const ServeStats& st = run.stats;
    std::fprintf(stderr,
                 "kvscope: %s cache (%s scales) against f32, on each request's tokens "
                 "(teacher-forced): max |logit difference| %.6g; the same most likely next token "
                 "at %d of %d passes (%.1f%%); a row of every layer's K and V takes %zu bytes "
                 "(f32: %zu)\n",
                 kv_cache_type_name(cfg.cache_type), kv_scale_mode_name(cfg.scale_mode),
                 all.max_logit_difference, all.same_next_token, all.passes,
                 all.passes > 0 ? 100.0 * all.same_next_token / all.passes : 0.0, st.bytes_per_row,
                 std::size_t(m.config().kv_bytes_per_token()));
}

// A bounded run: each request's tokens against the full cache (within the context), then
// StreamingLLM's comparison on the requests' texts joined into one.
void print_window_effect(const Model& m, Backend& be, const ServeRun& run) {
    const ServeConfig& cfg = run.config;
    const CacheEffect all = serve_window_effect(m, be, run);
    std::fprintf(stderr,
                 "kvscope: window of %d rows and %d sinks (%s positions) against the full cache, "
                 "on each request's tokens within the context (teacher-forced): max |logit "
                 "difference| %.6g; the same most likely next token at %d of %d passes (%.1f%%)\n",
                 cfg.window, cfg.sinks, sink_positions_name(cfg.sink_positions),
                 all.max_logit_difference, all.same_next_token, all.passes,
                 all.passes > 0 ? 100.0 * all.same_next_token / all.passes : 0.0);
    const StreamEffect e = serve_stream_effect(m, be, run, serve_alone(m, be, run).tokens);
    const auto ppl = [](const Perplexity& p, bool past) {
        const int n = past ? p.scored_past : p.scored_within;
        char b[32] = "-";
        if (n > 0) std::snprintf(b, sizeof b, "%.2f", past ? p.past : p.within);
        return std::string(b);
    };
    std::fprintf(stderr,
                 "kvscope: the requests' texts as the full cache writes them, joined into one of "
                 "%d tokens (the context: %d), one token a pass (teacher-forced): perplexity "
                 "within the context / past it: full cache %s / -; %d sinks at cache positions "
                 "%s / %s; at original positions %s / %s; no sinks, a window of %d rows %s / %s\n",
                 e.tokens, e.context, ppl(e.full, false).c_str(), e.sinks,
                 ppl(e.sinks_cache, false).c_str(), ppl(e.sinks_cache, true).c_str(),
                 ppl(e.sinks_original, false).c_str(), ppl(e.sinks_original, true).c_str(),
                 e.window + e.sinks, ppl(e.no_sinks, false).c_str(), ppl(e.no_sinks, true).c_str());
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
                                    "context; past it under --window)"),
         OptionSpec{.name = "block-size",
                    .value_name = "N",
                    .help = "K/V rows per block of the paged cache (default 16)",
                    .value = whole_in(1, 1 << 20)},
         OptionSpec{.name = "max-num-seqs",
                    .value_name = "N",
                    .help = "requests running at once (default 8)",
                    .value = whole_in(1, 64)},
         OptionSpec{.name = "max-num-batched-tokens",
                    .value_name = "N",
                    .help = "rows a step's pass may hold, prompt chunks and decode rows "
                            "together\n(default: no budget); a longer prompt is computed in "
                            "chunks over several steps",
                    .value = whole_in(1, 1 << 24)},
         OptionSpec{.name = "pool-blocks",
                    .value_name = "N",
                    .help =
                        "blocks in the pool (default: max-num-seqs x the context's blocks);\na "
                        "smaller pool queues requests and preempts running ones (computed again "
                        "later)",
                    .value = whole_in(1, 1 << 24)},
         {"no-prefix-caching", "",
          "no prefix cache: every prompt computed whole, no block kept after its request"},
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
         OptionSpec{.name = "sink-positions",
                    .value_name = "P",
                    .help = "cache (default: StreamingLLM's, the sinks numbered by their place in "
                            "the\ncache) or original (the positions their tokens had)",
                    .value = cmdline::one_of({sink_positions_name(SinkPositions::Cache),
                                              sink_positions_name(SinkPositions::Original)})},
         OptionSpec{
             .name = "cache-type",
             .value_name = "TYPE",
             .help = "how the pool stores K/V rows: f32 (default), int8 or fp8 (e4m3); the\neffect "
                     "on the next token is measured against f32",
             .value = cmdline::one_of({kv_cache_type_name(KvCacheType::F32),
                                       kv_cache_type_name(KvCacheType::Int8),
                                       kv_cache_type_name(KvCacheType::Fp8)})},
         OptionSpec{.name = "cache-scales",
                    .value_name = "S",
                    .help = "a quantised cache's scales: token (default: one per K and V row), "
                            "tensor\n(one per layer's K and V) or channel (K one per channel, V "
                            "per row); tensor\nand channel scales are calibrated on the prompts "
                            "first",
                    .value = cmdline::one_of({kv_scale_mode_name(KvScaleMode::Token),
                                              kv_scale_mode_name(KvScaleMode::Tensor),
                                              kv_scale_mode_name(KvScaleMode::ChannelK)})}});
    return specs;
}

int cmd_serve(int argc, char** argv) {
    const Args a = model_args("serve", serve_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Serve many prompts at once over a paged KV cache (continuous batching under a token "
            "budget, a prefix cache), printing each request's text as generate does; a summary "
            "goes to stderr.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    if (!a.has("prompts")) a.fail("--prompts FILE is required (one prompt a line)");
    const std::vector<PromptLine> prompts = read_prompts(a);
    ServeConfig cfg;
    cfg.block_size = a.integer("block-size", 16);
    cfg.max_num_seqs = a.integer("max-num-seqs", 8);
    cfg.max_num_batched_tokens = a.integer("max-num-batched-tokens", 0);
    cfg.pool_blocks = a.integer("pool-blocks", 0);
    cfg.prefix_caching = !a.has("no-prefix-caching");
    cfg.max_new_tokens = a.integer("max-new-tokens", 256);
    cfg.sampler = sampler_from(a);
    cfg.window = a.integer("window", 0);
    cfg.sinks = a.integer("sinks", 0);
    if (a.has("sinks") && !a.has("window")) a.fail("--sinks N needs --window N");
    if (a.has("sink-positions") && !a.has("window")) a.fail("--sink-positions needs --window N");
    cfg.sink_positions = sink_positions_from(a);
    cfg.cache_type = cache_type_from(a);
    cfg.scale_mode = scale_mode_from(a);
    if (a.has("cache-scales") && cfg.cache_type == KvCacheType::F32)
        a.fail("--cache-scales needs --cache-type int8 or fp8");
    Opened o = open_from(a);
    // serve prints no op's time: the CPU backend's per-op clock (two reads an op) stays off, as
    // in the window's Serving view.
    if (auto* cpu = dynamic_cast<CpuBackend*>(o.backend.backend.get())) cpu->set_time_ops(false);
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
    const std::string budget = run.config.max_num_batched_tokens > 0
                                   ? std::to_string(run.config.max_num_batched_tokens)
                                   : std::string("none");
    std::fprintf(
        stderr,
        "kvscope: serve: %s (%s, %s KV cache), %zu requests in %zu steps, %d tokens generated; "
        "blocks in the pool: %d of %d rows (%s); peak blocks used: %d (%s); internal "
        "fragmentation: %.1f%% (slots allocated but unused, summed over every step); prefix "
        "blocks shared: %d (full blocks requests found in the prefix cache at admission instead "
        "of computing them: %lld rows; %lld cached blocks taken for other rows); %.1f tokens per "
        "second (generated tokens / the steps' summed wall time: scheduling, forward passes and "
        "sampling; steady clock, one run); a contiguous cache per request would reserve %d "
        "requests x %d rows = %.0f blocks (%s), %.0f blocks more than the peak; queued: %d "
        "requests (steps spent waiting, by reason: places %lld, budget %lld, blocks %lld, "
        "preemption %lld); preempted: %d times; max-num-seqs %d, token budget %s a step; steps "
        "with prefill and decode rows in one pass: %d; steps with a prompt chunk: %d\n",
        escape_for_one_line(m.name()).c_str(), o.backend.backend->device().c_str(),
        kv_cache_type_name(cfg.cache_type), run.requests.size(), run.steps.size(), st.generated,
        st.pool_blocks, st.block_size, format_bytes(block_bytes * st.pool_blocks).c_str(),
        st.peak_blocks, format_bytes(block_bytes * st.peak_blocks).c_str(),
        st.fragmentation_percent(), st.cached_blocks_found, st.cached_rows, st.evictions,
        st.tokens_per_second(), st.peak_running, st.context, st.contiguous_blocks(),
        format_bytes(double(st.bytes_per_row) * st.contiguous_rows()).c_str(), run.blocks_saved(),
        st.queued_requests, st.waits[0], st.waits[1], st.waits[2], st.waits[3], st.preemptions,
        run.config.max_num_seqs, budget.c_str(), run.mixed_steps, run.chunked_steps);
    if (cfg.window > 0) print_window_effect(m, *o.backend.backend, run);
    if (cfg.cache_type != KvCacheType::F32) print_cache_type_effect(m, *o.backend.backend, run);
    return 0;
}

}  // namespace kvs::cli
