// kvscope-cli toy: the tutorials' toy example, printed from the trace of a Session on ToyModel.
// Nothing here computes model math: every number is read from the StepRecords.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/run_outputs.h"
#include "core/model/kv_rows.h"
#include "core/model/toy_model.h"
#include "core/session/trace_json.h"
#include "core/util/error.h"
#include "core/util/output_file.h"

namespace kvs::cli {
namespace {

// Two decimals at most, trailing zeros dropped; NaN (a head with no key) is "none".
std::string num(float x) {
    if (std::isnan(x)) return "none";
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(x));
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s == "-0" ? "0" : s;
}

constexpr int kCol = 10;
void cell(const std::string& s) {
    std::printf("%*s", kCol, s.c_str());
}

struct View {
    const Tokenizer& tok;
    std::vector<int> seq;  // every token that joined, in order (from the steps' new_tokens)
};

// Head outputs of one step: [n_layers 1, n_heads, rows]; the toy has one layer.
float head_out(const StepRecord& r, int h, int row) {
    return r.head_outputs[std::size_t(h) * r.attention.rows + row];
}

void print_context_and_logits(const View& v, const StepRecord& r) {
    const int H = r.attention.n_heads, last = r.attention.rows - 1;
    std::printf("  context vector of \"%s\" [even, last, first, all]: [",
                v.tok.piece(v.seq[r.attention.q_pos0 + last]).c_str());
    for (int h = 0; h < H; ++h)
        std::printf("%s%s", h ? ", " : "", num(head_out(r, h, last)).c_str());
    std::printf("]\n  logits (projection . context, best first):");
    std::vector<int> order(r.logits.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return r.logits[a] > r.logits[b]; });
    for (std::size_t i = 0; i < order.size(); ++i)
        std::printf("%s \"%s\" %s", i ? "," : "", v.tok.piece(order[i]).c_str(),
                    num(r.logits[order[i]]).c_str());
    std::printf("\n  chosen (greedy): \"%s\"\n", v.tok.piece(r.token_out).c_str());
    std::printf("  counted: %.0f FLOPs, %.0f bytes; measured: %.1f us\n", r.counts.flops,
                r.counts.bytes, r.wall_seconds * 1e6);
}

// One head's kept rows: scores then weights, over key columns 0..q_pos0+rows-1; cells after a
// row's own position are the causal mask's.
void print_head(const View& v, const StepRecord& r, int h) {
    const AttentionRows& a = r.attention;
    const int n_keys = a.q_pos0 + a.rows;
    std::printf("  head %d \"%s\": %s\n", h, toy_head_name(h), toy_head_rule(h));
    for (int table = 0; table < 2; ++table) {
        if (table == 1 || !a.scores.empty()) {
            std::printf("    %-10s", table == 0 ? "scores" : "weights");
            for (int j = 0; j < n_keys; ++j) cell(v.tok.piece(v.seq[j]));
            if (table == 1) std::printf("  | output");
            std::printf("\n");
        }
        for (int row = 0; row < a.rows && (table == 1 || !a.scores.empty()); ++row) {
            const auto vals = table == 0 ? a.score_row(0, h, row) : a.row(0, h, row);
            std::printf("    %-10s", v.tok.piece(v.seq[a.q_pos0 + row]).c_str());
            for (int j = 0; j < n_keys; ++j)
                cell(j < static_cast<int>(vals.size()) ? num(vals[j]) : "masked");
            if (table == 1) {
                std::printf("  | %s", num(head_out(r, h, row)).c_str());
                if (a.is_empty_row(0, h, row)) std::printf("  (no key to attend to)");
            }
            std::printf("\n");
        }
    }
}

void print_prefill(const View& v, const StepRecord& r) {
    const int P = static_cast<int>(r.new_tokens.size()), H = r.attention.n_heads;
    std::printf("\nprefill: %d tokens in one pass, %d K/V rows written (cache %d rows)\n", P,
                r.kv_rows_kept, r.kv.len);
    std::printf("  %4s %-10s %6s %6s |", "pos", "token", "K", "V");
    for (int h = 0; h < H; ++h) cell(toy_head_name(h));
    std::printf("\n");
    // kv_rows: [n_layers 1, 2 (K, V), rows, kv_dim 1]
    const ConstKvRows kv{r.kv_rows.data(), 1, P, 1};
    for (int t = 0; t < P; ++t) {
        std::printf("  %4d %-10s %6s %6s |", t + 1, v.tok.piece(r.new_tokens[t]).c_str(),
                    num(kv.row(0, kv.K, t)[0]).c_str(), num(kv.row(0, kv.V, t)[0]).c_str());
        for (int h = 0; h < H; ++h) cell(num(head_out(r, h, t)));
        std::printf("\n");
    }
    std::printf(
        "  (K: the position a key carries; V: the value; scores are 0 where a head's rule "
        "selects a key, -inf where not; masked: the causal mask)\n");
    for (int h = 0; h < H; ++h) print_head(v, r, h);
    print_context_and_logits(v, r);
}

void print_decode(const View& v, const StepRecord& r) {
    const int pos = r.attention.q_pos0 + 1;  // 1-based position of the new token
    const std::string word = v.tok.piece(r.new_tokens[0]);
    if (r.mode == CacheMode::Cached)
        std::printf(
            "\ndecode step %d (cached): \"%s\" at position %d; %d row through the model, "
            "read %d cached K/V rows, appended 1 (cache %d rows)\n",
            r.index, word.c_str(), pos, r.tokens_processed, r.pos0, r.kv.len);
    else
        std::printf(
            "\ndecode step %d (no cache): \"%s\" at position %d; cache emptied, all %d "
            "rows recomputed, the last one kept (cache %d rows)\n",
            r.index, word.c_str(), pos, r.tokens_processed, r.kv.len);
    if (r.kv_rows_kept == 1) {
        const ConstKvRows kv{r.kv_rows.data(), 1, 1, 1};  // [n_layers 1, 2, 1 row, kv_dim 1]
        std::printf("  K/V row written for \"%s\": K %s, V %s\n", word.c_str(),
                    num(kv.row(0, kv.K, 0)[0]).c_str(), num(kv.row(0, kv.V, 0)[0]).c_str());
    }
    for (int h = 0; h < r.attention.n_heads; ++h) print_head(v, r, h);
    print_context_and_logits(v, r);
}

}  // namespace

std::vector<OptionSpec> toy_options() {
    std::vector<OptionSpec> specs = {
        prompt_option("words of the toy vocabulary (default \"Today weather is so\")"),
        cmdline::file_option(),
        cmdline::new_tokens_option(
            "tokens to generate: the prefill chooses the first, each decode\nstep one more "
            "(default 2)",
            1 << 20),
        // The older spelling of N decode steps: -n N+1.
        {.name = "decode",
         .value_name = "N",
         .help = "",
         .hidden = true,
         .value = cmdline::whole_in(0, 1 << 20)},
        timing_option()};
    for (auto& o : cmdline::cache_options(false)) specs.push_back(o);
    for (auto& o : run_output_options()) specs.push_back(o);
    return specs;
}

int cmd_toy(int argc, char** argv) {
    const Args a("toy", toy_options(), argc, argv, 2);
    ToyModel m;
    if (a.help()) {
        std::fputs(
            "The tutorials' toy example: four hand-made attention heads over scalar "
            "token values, prefill then decode with the KV cache.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        std::printf("vocabulary: %s\n", m.toy_tokenizer().vocabulary_list().c_str());
        return 0;
    }
    const CacheView cache = cmdline::cache_from(a, CacheView::On);  // on or off: the rule's
    const auto prompt =
        m.tokenizer().encode(cmdline::prompt_from(a).value_or("Today weather is so"));
    const int ctx = m.config().seq_len, P = static_cast<int>(prompt.size());
    if (P > ctx)
        throw Error("the prompt is " + std::to_string(P) + " words, the toy's context is " +
                    std::to_string(ctx));
    if (a.has("decode") && a.has("max-new-tokens"))
        a.fail("--decode N and --max-new-tokens N+1 say the same: give one");
    const int new_tokens =
        a.has("decode") ? a.integer("decode", 1) + 1 : a.integer("max-new-tokens", 2);
    if (new_tokens - 1 > ctx - P)
        throw Error("--max-new-tokens " + std::to_string(new_tokens) +
                    " does not fit: the prompt is " + std::to_string(P) +
                    " words and the context " + std::to_string(ctx) + ", so at most " +
                    std::to_string(ctx - P + 1) + " new tokens");
    const RunOutputs out = run_outputs_from(a, m.config());

    SessionConfig cfg;
    cfg.mode = cache == CacheView::Off ? CacheMode::Uncached : CacheMode::Cached;
    cfg.max_new_tokens = new_tokens;  // the prefill chooses one, each decode step one more
    cfg.top_k_record = m.config().vocab_size;
    cfg.timing = timing_from(a);
    BackendChoice unused = make_backend("cpu");  // Session wants one; the toy runs in core
    Session s(m, *unused.backend, cfg);
    s.set_prompt_tokens(prompt);

    const StepRecord& first = s.step();
    View v{m.tokenizer(), first.new_tokens};
    std::printf(
        "toy model: 1 layer, 4 heads (0 even, 1 last, 2 first, 3 all), one K/V row per token "
        "(K = position, V = value), context %d, computed on %s\n"
        "numbering: positions from 1, layers, heads and steps from 0 (step 0 is the prefill)\n",
        ctx, first.backend.c_str());
    std::string prompt_text;
    for (std::size_t i = 0; i < first.new_tokens.size(); ++i)
        prompt_text += m.tokenizer().decode(i ? first.new_tokens[i - 1] : -1, first.new_tokens[i]);
    std::printf("prompt: \"%s\"\n", prompt_text.c_str());
    print_prefill(v, first);
    while (!s.finished()) {
        const StepRecord& r = s.step();
        v.seq.push_back(r.new_tokens[0]);
        print_decode(v, r);
    }
    std::printf("\ntext: \"%s\"; stopped: %s", s.text().c_str(),
                finish_reason_name(s.finish_reason()));
    if (s.finish_reason() == FinishReason::EndToken)
        std::printf(" (\"%s\")", m.tokenizer().piece(s.trace().back().token_out).c_str());
    std::printf("\n");
    TraceJsonRun run;
    run.model = &m;
    run.sampler = cfg.sampler;
    run.recorded = recorded_here("kvscope-cli toy", "core", "host CPU (the toy runs in core)",
                                 cfg.timing.runs);
    run.sessions.push_back(trace_json_session(s));
    write_run_outputs(out, run);
    return 0;
}

}  // namespace kvs::cli
