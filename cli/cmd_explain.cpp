// kvscope-cli explain: one attention row from the inside (core/session/attention_explain.h), for a
// chosen step, layer, head and query row, as text or JSON. Every number is read from the trace.
// The sessions are the window's (core/session/workbench.h): with the cache, without it, or the
// bidirectional one beside its causal twin; an uncached step keeps every query row it computed,
// so each row its why-not-Q count names can be opened. A query row is named by its position.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/explain_stages.h"
#include "core/model/toy_model.h"
#include "core/session/attention_explain.h"
#include "core/session/projection_explain.h"
#include "core/session/step_map.h"
#include "core/session/step_rows.h"
#include "core/session/workbench.h"
#include "core/util/error.h"
#include "core/util/json_writer.h"
#include "core/util/numbering.h"
#include "core/util/utf8.h"
#include "lessonlib/attention_row_words.h"
#include "lessonlib/why_not_q_words.h"

namespace kvs::cli {
namespace {

std::string trimmed(const std::string& s) {
    const auto a = s.find_first_not_of(' ');
    return a == std::string::npos ? s : s.substr(a);
}

// An index in lo..hi, or a name matched by `find` (-1 when no match).
template <class Find>
int index_or_name(const Args& a, const std::string& opt, int fallback, int lo, int hi,
                  const std::string& what, Find find) {
    if (!a.has(opt)) return fallback;
    const std::string v = a.str(opt);
    if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos)
        return a.whole(opt, v, lo, hi);
    const int i = find(v);
    if (i < 0) throw Error("explain: --" + opt + ": no " + what + " '" + v + "'");
    return i;
}

void print_text(const AttentionExplain& e, const Model& m, const std::vector<int>& seq,
                const StepRecord& r) {
    const Tokenizer& tok = m.tokenizer();
    // Pieces and the model's name come from files: escaped, each kept on one line.
    auto piece = [&](int pos) { return escape_for_one_line(tok.piece(seq.at(pos))); };
    std::printf("explain: %s, step %d (%s, %s), layer %d, head %d",
                escape_for_one_line(m.name()).c_str(), e.step, phase_name(e.phase),
                mode_name(e.mode), e.layer, e.head);
    if (m.is_toy()) std::printf(" \"%s\" (%s)", toy_head_name(e.head), toy_head_rule(e.head));
    // The numbering of the whole tool (core/util/numbering.h): positions from 1, a query row
    // named by its position; layers, heads and steps from 0.
    std::printf(", %s \"%s\" (%s mask)\n", query_row_words(e.q_pos).c_str(), piece(e.q_pos).c_str(),
                mask_name(r.mask));
    std::printf("  out = softmax(q . K^T / sqrt(d_k) + mask) . V      d_k = %d, 1/sqrt(d_k) = %s\n",
                e.head_dim, attention_number(e.scale).c_str());
    const int T = e.n_keys, dk = e.head_dim;
    if (e.phase == Phase::Prefill || e.query_rows_computed > 1)
        std::printf(
            "  shapes: Q [%d, %d] . K^T [%d, %d] -> scores [%d, %d]; this is the query at "
            "position %d\n",
            r.tokens_processed, dk, dk, T, r.tokens_processed, T, position_of_index(e.q_pos));
    else
        std::printf("  shapes: q [1, %d] . K^T [%d, %d] -> scores [1, %d]\n", dk, dk, T, T);
    if (e.heads_sharing_kv.size() > 1) {
        std::printf("  K/V head %d is shared by query heads", e.kv_head);
        for (int h : e.heads_sharing_kv) std::printf(" %d", h);
        std::printf(m.is_toy() ? " (the toy's single cache)\n" : " (grouped-query attention)\n");
    }
    if (e.scores_by_rule)
        std::printf(
            "  the toy has no q vector: its head scores a key 0 where the rule selects it, -inf "
            "where not; K is the key's position, V its value\n");
    else
        std::printf("  q (after RoPE) = %s\n", attention_numbers(e.q.data(), e.q.size()).c_str());
    std::printf("  %4s %-12s %-10s %10s %10s %8s %10s  %s\n", "pos", "token", "source", "q.k",
                "x1/sqrt(dk)", "mask", "weight", m.is_toy() ? "K, V" : "K row | V row");
    for (int j = 0; j < T; ++j) {
        const std::size_t at = std::size_t(j) * dk;
        std::string token(1, '"');
        token.append(piece(j)).push_back('"');
        const KeyCells c = key_cells(e, j, ReportLang::En);
        std::printf("  %4d %-12s %-10s %10s %10s %8s %10s  ", c.position, token.c_str(),
                    c.source.c_str(), c.raw.c_str(), c.scaled.c_str(), c.masked ? "-inf" : "",
                    c.weight.c_str());
        if (m.is_toy())
            std::printf("%s, %s\n", attention_number(e.k[at]).c_str(),
                        attention_number(e.v[at]).c_str());
        else
            std::printf("%s | %s\n", attention_numbers(&e.k[at], dk).c_str(),
                        attention_numbers(&e.v[at], dk).c_str());
    }
    if (e.empty_row) std::printf("  every key is masked: no weights, no output (none)\n");
    std::printf("  output sum_j w_j . v_j = %s\n",
                attention_numbers(e.output.data(), e.output.size()).c_str());
    std::printf("  the model's attention output = %s\n",
                attention_numbers(e.model_output.data(), e.model_output.size()).c_str());
    // Why K and V are cached and Q is not: what each layer's query rows were for.
    const int L = m.config().n_layers;
    std::printf("  why not Q: %s\n", why_not_q_words(r, e.layer, L, ReportLang::En).c_str());
    for (const QueryRowUse& u : query_row_use(r, L))
        std::printf("    %s\n", query_row_use_words(u, ReportLang::En).c_str());
    std::printf("%s\n", kNumberingWords);
}

// The stages around the row (cli/explain_stages.h): where q, k and v came from, the map of the
// step, the next token's sampling.
struct AroundTheRow {
    std::optional<ProjectionExplain> projection;
    std::string projection_missing;
    StepMap map;
};

void print_json(const AttentionExplain& e, const std::optional<AttentionBlock>& b, const Model& m,
                const std::vector<int>& seq, const StepRecord& r, const AroundTheRow& around) {
    JsonWriter j(std::cout);
    j.begin_object();
    j.field("kvscope_explain", 1).field("model", m.name());
    j.field("step", e.step).field("phase", phase_name(e.phase)).field("mode", mode_name(e.mode));
    j.field("layer", e.layer).field("head", e.head);
    if (m.is_toy()) j.field("head_name", toy_head_name(e.head));
    j.field("kv_head", e.kv_head);
    j.key("heads_sharing_kv").ints(e.heads_sharing_kv);
    // Positions from 1 as everywhere (core/util/numbering.h); q_pos and a key's pos are indexes
    // into the sequence (position - 1), the fields docs/trace-json.md's readers rely on.
    j.key("indexing").begin_object();
    j.field("positions_from", 1).field("layers_from", 0).field("heads_from", 0);
    j.field("steps_from", 0).field("query_rows", "named by their position");
    j.field("row", "the query's row among the step's kept rows, from 0");
    j.end_object();
    j.field("mask", mask_name(r.mask));
    j.field("row", e.row)
        .field("position", position_of_index(e.q_pos))
        .field("q_pos", e.q_pos)
        .field("query_piece", m.tokenizer().piece(seq.at(e.q_pos)));
    j.field("head_dim", e.head_dim).field("n_keys", e.n_keys);
    j.field("scale", static_cast<double>(e.scale)).field("scores_by_rule", e.scores_by_rule);
    j.key("q").floats(e.q);
    j.key("keys").begin_array();
    for (int k = 0; k < e.n_keys; ++k) {
        const std::size_t at = std::size_t(k) * e.head_dim;
        j.begin_object();
        j.field("position", position_of_index(k)).field("pos", k);
        j.field("piece", m.tokenizer().piece(seq.at(k)));
        j.field("source", kv_source_name(e.source[k]));
        j.key("k").floats(std::span<const float>(&e.k[at], e.head_dim));
        j.key("v").floats(std::span<const float>(&e.v[at], e.head_dim));
        // -inf is written as null
        j.field("raw", static_cast<double>(e.raw[k]));
        j.field("scaled", static_cast<double>(e.scaled[k]));
        j.field("masked", e.masked[k] != 0);
        j.field("weight", static_cast<double>(e.weights[k]));
        j.end_object();
    }
    j.end_array();
    j.field("empty_row", e.empty_row);
    j.key("output").floats(e.output);
    j.key("model_output").floats(e.model_output);
    j.key("why_not_q").begin_object();
    j.field("query_rows_computed", r.query_rows_computed)
        .field("query_rows_used", r.query_rows_used);
    j.field("kv_rows_written", r.kv_rows_written).field("kv_rows_recomputed", r.kv_rows_recomputed);
    if (r.kv_recomputed_max_delta >= 0)
        j.field("kv_recomputed_max_delta", r.kv_recomputed_max_delta);
    else
        j.key("kv_recomputed_max_delta").null();
    // Each layer's query rows: computed = for_output + build_next_kv + rebuild_next_kv +
    // thrown_away (core/session/why_not_q.h).
    j.key("layers").begin_array();
    for (const QueryRowUse& u : query_row_use(r, m.config().n_layers)) {
        j.begin_object();
        j.field("layer", u.layer).field("computed", u.computed).field("for_output", u.for_output);
        j.field("build_next_kv", u.build_next_kv).field("rebuild_next_kv", u.rebuild_next_kv);
        j.field("thrown_away", u.thrown_away);
        j.end_object();
    }
    j.end_array();
    j.field("line", why_not_q_words(r, e.layer, m.config().n_layers, ReportLang::En));
    j.end_object();
    // Every row the step kept at this layer and head, as Inside attention's matrix draws it: the
    // same numbers as the row above (core/session/attention_explain.h).
    if (b) {
        j.key("matrix").begin_object();
        j.field("first_position", position_of_index(b->q_pos0)).field("rows", b->rows);
        j.field("keys", b->n_keys);
        auto rows_of = [&](const char* name, const std::vector<float>& v) {
            j.key(name).begin_array();
            for (int row = 0; row < b->rows; ++row)
                j.floats(std::span<const float>(v).subspan(b->at(row, 0), b->n_keys));
            j.end_array();
        };
        rows_of("raw", b->raw);
        rows_of("scaled", b->scaled);
        rows_of("weights", b->weights);
        j.key("masked").begin_array();
        for (int row = 0; row < b->rows; ++row) {
            const std::vector<int> flags(b->masked.begin() + b->at(row, 0),
                                         b->masked.begin() + b->at(row, 0) + b->n_keys);
            j.ints(flags);
        }
        j.end_array();
        // Rows with no key to attend to (the toy's even head at position 1): no weights.
        j.key("empty_rows").ints(std::vector<int>(b->empty_row.begin(), b->empty_row.end()));
        j.end_object();
    }
    write_projection_json(j, around.projection, around.projection_missing, m);
    write_map_json(j, around.map);
    write_sampling_json(j, r, m);
    j.end_object();
    std::cout << '\n';
}

// explain's --cache: one session's row, with the cache or without it, or the session without the
// causal mask (beside its causal twin, as the window runs it).
std::string explain_cache_problem(const std::string& v) {
    if (v == "on" || v == "off" || v == "bidirectional") return {};
    if (v == "compare")
        return "'compare': explain shows one session's row (on, off or bidirectional)";
    return "'" + v + "' is not one of on, off, bidirectional";
}

}  // namespace

std::vector<OptionSpec> explain_options() {
    auto specs = model_options();
    specs.insert(
        specs.end(),
        {prompt_option("prompt text (the toy's default: \"Today weather is so\")"),
         cmdline::file_option(),
         OptionSpec{.name = "step",
                    .value_name = "S",
                    .help = "0 = the prefill (default), S = decode step S",
                    .value = cmdline::whole_in(0, 1 << 20)},
         OptionSpec{.name = "layer",
                    .value_name = "L",
                    .help = "layer (default 0)",
                    .value = cmdline::whole_in(0, 1 << 16)},
         {"head", "H|NAME", "query head: a number, or the toy's even | last | first | all"},
         {"row", "P|TOKEN",
          "the query row, named by its position (from 1): a number, the token's text, "
          "or last (default: the step's newest row)"},
         OptionSpec{.name = "show",
                    .value_name = "PART",
                    .help = "attention (default): the row; projection: where its q, k and v "
                            "came from;\nmap: the step through every layer, with and without "
                            "the cache;\nsampling: the next token's distribution, stage by "
                            "stage (--json has all)",
                    .value = cmdline::one_of({"attention", "projection", "map", "sampling"})},
         {"json", "", "print JSON instead of text"}});
    for (auto& o : cmdline::sampler_options()) specs.push_back(o);
    for (auto o : cmdline::cache_options(false)) {
        if (o.name == "cache") {
            o.help =
                "decode with the KV cache, recompute every row, or the\nsession without the "
                "causal mask (beside its causal twin, as the window runs it)\n(default on)";
            o.value = cmdline::checked_by(explain_cache_problem, "on | off | bidirectional");
        }
        specs.push_back(o);
    }
    return specs;
}

int cmd_explain(int argc, char** argv) {
    const Args a = model_args("explain", explain_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "One attention row from the inside: q, the K rows with where each came from, "
            "q.k, the scaling by 1/sqrt(d_k), the mask, the softmax weights, the V rows "
            "and the output, as the engine computed them.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    const CacheView cache = cmdline::cache_from(a, CacheView::On);  // the rule's: not compare
    const std::string show = a.checked("show", "attention");
    const std::optional<std::string> given = cmdline::prompt_from(a);
    Opened o = open_from(a);
    std::shared_ptr<const Model> model = std::move(o.model);
    const Model& m = *model;
    const ModelConfig& c = m.config();
    if (cache == CacheView::Bidirectional && m.is_toy())
        throw Error("explain: the toy's heads are rules that cannot run without the causal mask");
    const std::string prompt = given.value_or(m.is_toy() ? "Today weather is so" : "");
    const auto prompt_ids = m.tokenizer().encode(prompt);
    if (prompt_ids.empty()) throw Error("explain: the prompt is empty");
    const int max_step = c.seq_len - static_cast<int>(prompt_ids.size());
    const int step = a.integer_within("step", 0, 0, std::max(0, max_step),
                                      "the decode steps the context leaves after the prompt");
    const int layer = a.integer_within("layer", 0, 0, c.n_layers - 1, "the model's layers");
    const int head =
        index_or_name(a, "head", 0, 0, c.n_heads - 1, "head", [&](const std::string& v) {
            for (int h = 0; m.is_toy() && h < c.n_heads; ++h)
                if (v == toy_head_name(h)) return h;
            return -1;
        });

    SessionConfig cfg;
    cfg.max_new_tokens = step + 1;
    cfg.stop_at_end_token = false;  // the step asked for is reached even past an end token
    cfg.keep_every_query_row = true;
    cfg.sampler = cmdline::sampler_from(a);
    cfg.capture.projections = true;  // where q, k and v came from (--show projection, --json)
    Workbench bench(*o.backend.backend, cfg);
    bench.set_view(cache);
    if (const std::string refused = bench.open(model, prompt); !refused.empty())
        throw Error("explain: " + refused);
    for (int i = 0; i <= step; ++i) bench.step();
    // The bidirectional view's second session is the one without the mask.
    const Session& s = bench.session(cache == CacheView::Bidirectional ? 1 : 0);
    const StepRecord& r = s.trace().steps().at(step);
    const std::vector<int>& seq = s.tokens();

    const QueryRows rows = query_rows_of(r);
    const int newest = rows.first + rows.count - 1;
    int index = newest;
    if (a.has("row") && a.str("row") != "last") {
        const std::string v = a.str("row");
        if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) {
            index = index_of_position(a.whole("row", v, 1, c.seq_len));
        } else {
            index = -1;
            for (int i = rows.first; i < rows.first + rows.count; ++i) {
                const std::string p = m.tokenizer().piece(seq.at(i));
                if (p == v || trimmed(p) == v) index = i;  // the last
            }
            if (index < 0)
                throw Error("explain: --row: no query row with the token '" + v + "' at step " +
                            std::to_string(step));
        }
    }
    std::string why;
    const auto e = explain_query(s.trace(), c, step, layer, head, index, &why);
    if (!e) throw Error("explain: --row " + std::to_string(position_of_index(index)) + ": " + why);
    const auto b = explain_attention_block(s.trace(), c, step, layer, head, nullptr);
    AroundTheRow around;
    around.projection = explain_projection_query(s.trace(), c, step, layer, head, index,
                                                 &around.projection_missing);
    around.map = step_map(r, c.n_layers);
    if (a.has("json"))
        print_json(*e, b, m, seq, r, around);
    else if (show == "projection") {
        if (!around.projection)
            throw Error("explain: --show projection: " + around.projection_missing);
        print_projection_text(*around.projection, m, seq);
    } else if (show == "map")
        print_map_text(around.map, seq, m);
    else if (show == "sampling")
        print_sampling_text(r, m);
    else
        print_text(*e, m, seq, r);
    return 0;
}

}  // namespace kvs::cli
