#include "core/session/trace_json.h"

#include <sys/utsname.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>

#include "core/model/toy_model.h"
#include "core/session/session.h"
#include "core/session/why_not_q.h"
#include "core/util/json_writer.h"
#include "core/util/version.h"

namespace kvs {
namespace {

// "Linux x86_64, AMD EPYC 9B14" from uname and /proc/cpuinfo's first model name.
std::string this_host() {
    std::string h;
    utsname u{};
    if (uname(&u) == 0) h = std::string(u.sysname) + " " + u.machine;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon != std::string::npos && colon + 2 <= line.size())
            h += (h.empty() ? "" : ", ") + line.substr(colon + 2);
        break;
    }
    return h;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

void write_steps(JsonWriter& j, const Trace& trace, const Tokenizer& tok);

// The fields of one session: at the top level for the first, in "twin" for compare's second.
void write_session(JsonWriter& j, const TraceJsonSession& s, const Tokenizer& tok) {
    j.field("mode", mode_name(s.mode));
    j.key("prompt_tokens").ints(s.tokens.first(static_cast<std::size_t>(s.prompt_len)));
    j.key("tokens").ints(s.tokens);
    j.key("token_pieces").begin_array();
    for (int t : s.tokens) j.value(tok.piece(t));
    j.end_array();
    j.field("text", s.text);
    j.field("finish_reason", s.finish != FinishReason::None ? finish_reason_name(s.finish) : "");
    j.key("trace_memory").begin_object();
    j.field("payload_bytes", s.trace->payload_bytes()).field("budget_bytes", s.trace->budget());
    j.field("evicted_steps", s.trace->evicted_steps());
    j.end_object();
    j.key("steps").begin_array();
    write_steps(j, *s.trace, tok);
    j.end_array();
}

}  // namespace

RecordedOn recorded_here(std::string program, std::string backend, std::string device,
                         int timing_runs) {
    RecordedOn r;
    r.program = std::move(program);
    r.version = kvscope_version();
    r.date = utc_now();
    r.backend = std::move(backend);
    r.device = std::move(device);
    r.host = this_host();
    r.timing_runs = timing_runs;
    return r;
}

TraceJsonSession trace_json_session(const Session& s) {
    TraceJsonSession t;
    t.mode = s.config().mode;
    t.tokens = s.tokens();
    t.prompt_len = s.prompt_len();
    t.text = s.text();
    t.finish = s.finish_reason();
    t.trace = &s.trace();
    return t;
}

void write_trace_json(std::ostream& os, const Session& s, const RecordedOn& recorded) {
    TraceJsonRun run;
    run.model = &s.model();
    run.sampler = s.config().sampler;
    run.recorded = recorded;
    run.sessions.push_back(trace_json_session(s));
    write_trace_json(os, run);
}

OutputKind trace_json_output() {
    return json_output_keyed("trace JSON", "kvscope_trace");
}

void write_trace_json(std::ostream& os, const TraceJsonRun& run) {
    const Model& m = *run.model;
    const ModelConfig& c = m.config();
    const Tokenizer& tok = m.tokenizer();
    // NaN and the infinities a broken model computes are written as text, so they read back
    // as themselves (docs/trace-json.md); null keeps its meanings (no draw, no row, not measured).
    JsonWriter j(os, NonFinite::text);
    j.begin_object();
    j.field("kvscope_trace", kTraceJsonVersion);
    // How the numbers below index: arrays count from 0; tokens[i] is the token at position
    // i + 1, so pos0 and q_pos0 are positions minus 1; layers, heads and steps are numbered from
    // 0 as in the window and lessons.
    j.key("indexing").begin_object();
    j.field("positions_from", 1).field("layers_from", 0).field("heads_from", 0);
    j.field("steps_from", 0).field("pos0", "index into tokens: position - 1");
    j.end_object();
    const RecordedOn& r = run.recorded;
    j.key("recorded").begin_object();
    j.field("program", r.program).field("version", r.version).field("date", r.date);
    j.field("backend", r.backend).field("device", r.device).field("host", r.host);
    j.field("timing_runs", r.timing_runs);
    j.end_object();
    j.key("model").begin_object();
    j.field("name", m.name()).field("toy", m.is_toy());
    j.field("dim", c.dim).field("hidden_dim", c.hidden_dim).field("n_layers", c.n_layers);
    j.field("n_heads", c.n_heads).field("n_kv_heads", c.n_kv_heads).field("head_dim", c.head_dim());
    j.field("vocab_size", c.vocab_size).field("seq_len", c.seq_len);
    if (m.is_toy()) {
        j.key("head_names").begin_array();  // by head index
        for (int h = 0; h < c.n_heads; ++h) j.value(toy_head_name(h));
        j.end_array();
    }
    // What a replay counts FLOPs with (core/counts.h) and says it was recorded on.
    j.field("architecture", architecture_name(c.arch));
    j.field("shared_classifier", c.shared_classifier).field("qkv_bias", c.qkv_bias);
    j.field("n_positions", c.n_positions);
    j.field("format", m.format()).field("parameters", m.parameter_count());
    j.field("bos", tok.bos());
    j.end_object();
    j.key("sampler").begin_object();
    const auto& sc = run.sampler;
    j.field("temperature", static_cast<double>(sc.temperature)).field("top_k", sc.top_k);
    j.field("top_p", static_cast<double>(sc.top_p));
    j.field("seed", static_cast<std::int64_t>(sc.seed));
    j.end_object();
    write_session(j, run.sessions.at(0), tok);
    if (run.sessions.size() > 1) {
        // Compare mode: the uncached twin, step for step, and how far their logits differ.
        j.key("twin").begin_object();
        write_session(j, run.sessions[1], tok);
        j.end_object();
        j.key("logit_max_diff").begin_array();
        for (double d : run.logit_max_diff) j.value(d);  // "NaN": not compared, or NaN logits
        j.end_array();
    }
    j.end_object();
    os << '\n';
}

namespace {

// weights[layer][head][row] and, when kept, scores[layer][head][row] (a row: its keys).
void write_attention(JsonWriter& j, const AttentionRows& a) {
    j.key("attention").begin_object();
    j.field("q_pos0", a.q_pos0).field("rows", a.rows).field("all_keys", a.all_keys);
    // weights[layer][head][row] = probabilities over keys 0..q_pos0+row (causal)
    j.key("weights").begin_array();
    for (int l = 0; l < a.n_layers; ++l) {
        j.begin_array();
        for (int h = 0; h < a.n_heads; ++h) {
            j.begin_array();
            for (int row = 0; row < a.rows; ++row) {
                if (a.is_empty_row(l, h, row))
                    j.null();
                else
                    j.floats(a.row(l, h, row));
            }
            j.end_array();
        }
        j.end_array();
    }
    j.end_array();
    if (!a.scores.empty()) {
        // scores[layer][head][row] before softmax, packed like weights ("-Infinity": masked)
        j.key("scores").begin_array();
        for (int l = 0; l < a.n_layers; ++l) {
            j.begin_array();
            for (int h = 0; h < a.n_heads; ++h) {
                j.begin_array();
                for (int row = 0; row < a.rows; ++row) j.floats(a.score_row(l, h, row));
                j.end_array();
            }
            j.end_array();
        }
        j.end_array();
    }
    j.end_object();
}

void write_steps(JsonWriter& j, const Trace& trace, const Tokenizer& tok) {
    for (const StepRecord& r : trace.steps()) {
        j.begin_object();
        j.field("index", r.index)
            .field("phase", phase_name(r.phase))
            .field("mode", mode_name(r.mode))
            .field("mask", mask_name(r.mask));
        j.key("new_tokens").ints(r.new_tokens);
        j.field("pos0", r.pos0).field("tokens_processed", r.tokens_processed);
        j.field("forward_calls", r.forward_calls);
        j.field("token_out", r.token_out).field("token_out_piece", tok.piece(r.token_out));
        if (r.coin >= 0)
            j.field("coin", static_cast<double>(r.coin));
        else
            j.key("coin").null();
        j.key("top").begin_array();
        for (const TopToken& t : r.top) {
            j.begin_object();
            j.field("id", t.id).field("piece", tok.piece(t.id));
            j.field("prob", static_cast<double>(t.prob))
                .field("logit", static_cast<double>(t.logit));
            j.end_object();
        }
        j.end_array();
        if (r.sampling.vocab > 0) write_sampling_json(j, r.sampling, tok);
        j.key("kv").begin_object();
        j.field("n_layers", r.kv.n_layers).field("len", r.kv.len).field("capacity", r.kv.capacity);
        j.field("n_kv_heads", r.kv.n_kv_heads).field("head_dim", r.kv.head_dim);
        j.field("bytes", r.kv.bytes());
        j.end_object();
        j.key("time").begin_object();
        j.field("wall_s", r.wall_seconds).field("forward_s", r.forward_seconds);
        j.field("runs", r.timing_runs).field("forward_min_s", r.forward_min_seconds);
        j.field("forward_max_s", r.forward_max_seconds);
        if (r.timed_in_turn) j.field("timed_in_turn", true);  // with the twin's equal prefill
        j.field("path", pass_path_name(r.path));
        if (r.kernel_launches > 0) j.field("kernels", r.kernel_launches);
        if (r.graph_seconds > 0)
            j.field("graph_s", r.graph_seconds).field("graph_kernels", r.graph_kernel_launches);
        if (r.fused_seconds > 0)
            j.field("fused_s", r.fused_seconds).field("fused_kernels", r.fused_kernel_launches);
        j.field("backend", r.backend).field("device", r.device);
        j.key("ops").begin_object();
        for (int i = 0; i < kOpCount; ++i)
            if (r.op_times.calls[i] > 0)
                j.field(op_name(static_cast<Op>(i)), r.op_times.seconds[i]);
        j.end_object();
        j.key("op_calls").begin_object();  // how many calls each op's seconds add up
        for (int i = 0; i < kOpCount; ++i)
            if (r.op_times.calls[i] > 0) j.field(op_name(static_cast<Op>(i)), r.op_times.calls[i]);
        j.end_object();
        j.end_object();
        j.key("counts").begin_object();
        j.field("flops", r.counts.flops).field("matmul_flops", r.counts.matmul_flops);
        j.field("attention_flops", r.counts.attention_flops).field("bytes", r.counts.bytes);
        // bytes = weight_bytes + kv_read_bytes + kv_write_bytes, the weights as the model kept
        // them (a replay has no weights to count them from)
        j.field("weight_bytes", r.counts.weight_bytes);
        j.field("kv_read_bytes", r.counts.kv_read_bytes);
        j.field("kv_write_bytes", r.counts.kv_write_bytes);
        j.end_object();
        j.key("why_not_q").begin_object();
        j.field("query_rows_computed", r.query_rows_computed);
        j.field("query_rows_used", r.query_rows_used);
        j.field("kv_rows_written", r.kv_rows_written);
        j.field("kv_rows_recomputed", r.kv_rows_recomputed);
        // null when nothing was recomputed, or the trace kept no K/V rows to compare with
        if (r.kv_recomputed_max_delta < 0)
            j.key("kv_recomputed_max_delta").null();
        else
            j.field("kv_recomputed_max_delta", r.kv_recomputed_max_delta);
        // Per layer, K and V apart (measured; empty when nothing was compared).
        j.key("kv_delta_k").floats(std::vector<float>(r.kv_delta_k.begin(), r.kv_delta_k.end()));
        j.key("kv_delta_v").floats(std::vector<float>(r.kv_delta_v.begin(), r.kv_delta_v.end()));
        // Each layer's query rows: computed = for_output + build_next_kv + rebuild_next_kv +
        // thrown_away (core/session/why_not_q.h); the step's cache shape says how many layers.
        j.key("layers").begin_array();
        for (const QueryRowUse& u : query_row_use(r, r.kv.n_layers)) {
            j.begin_object();
            j.field("layer", u.layer).field("computed", u.computed);
            j.field("for_output", u.for_output).field("build_next_kv", u.build_next_kv);
            j.field("rebuild_next_kv", u.rebuild_next_kv).field("thrown_away", u.thrown_away);
            j.end_object();
        }
        j.end_array();
        j.end_object();
        j.field("payload_evicted", r.payload_evicted);
        if (!r.attention.p.empty()) write_attention(j, r.attention);
        if (!r.head_outputs.empty()) j.key("head_outputs").floats(r.head_outputs);
        if (!r.q_rows.empty()) {
            // The kept query rows (core/session/attention_explain.h): q after RoPE, and the
            // attention output before the output projection.
            j.key("q_rows").begin_object();
            j.field("layout", "[n_layers, attention.rows, n_heads * head_dim]");
            j.key("values").floats(r.q_rows);
            j.end_object();
            j.key("attn_out").begin_object();
            j.field("layout", "[n_layers, attention.rows, n_heads * head_dim]");
            j.key("values").floats(r.attn_out);
            j.end_object();
        }
        if (!r.projections.empty()) {
            // Where the kept rows' q, k and v came from (core/model/projection_rows.h).
            j.key("projections").begin_object();
            j.field("layout",
                    "[n_layers, attention.rows, x (dim) | x_norm (dim) | q (dim) | k (kv_dim) | v "
                    "(kv_dim) | k_rope (kv_dim)]");
            j.key("values").floats(r.projections);
            j.end_object();
        }
        if (!r.ops.ops.empty()) {
            // The op strip (core/model/op_log.h): seconds null where the op ran inside the call of
            // ops[timed_with], or the backend did not time calls one by one.
            j.key("ops").begin_array();
            for (const OpRecord& o : r.ops.ops) {
                j.begin_object();
                j.field("op", op_kind_name(o.kind)).field("layer", o.layer);
                j.key("in").begin_array().value(o.in.rows).value(o.in.features).end_array();
                j.key("out").begin_array().value(o.out.rows).value(o.out.features).end_array();
                j.field("flops", o.flops);
                if (o.seconds < 0)
                    j.key("seconds").null();
                else
                    j.field("seconds", o.seconds);
                if (o.timed_with >= 0) j.field("timed_with", o.timed_with);
                if (o.kernel) j.field("kernel", o.kernel);
                j.end_object();
            }
            j.end_array();
        }
        if (!r.logits.empty()) j.key("logits").floats(r.logits);
        if (!r.kv_rows.empty()) {
            j.key("kv_rows").begin_object();
            j.field("rows", r.kv_rows_kept).field("layout", "[n_layers, 2 (K, V), rows, kv_dim]");
            j.key("values").floats(r.kv_rows);
            j.end_object();
        }
        j.end_object();
    }
}

}  // namespace

// The distribution the step's draw indexed, stage by stage (core/session/sampling_stages.h).
void write_sampling_json(JsonWriter& j, const SamplingStages& s, const Tokenizer& tok) {
    j.key("sampling").begin_object();
    j.field("greedy", s.greedy).field("temperature", static_cast<double>(s.temperature));
    j.field("top_k", s.top_k).field("top_p", static_cast<double>(s.top_p));
    j.field("kept_top_k", s.kept_top_k).field("kept_top_p", s.kept_top_p);
    j.field("nucleus_mass", static_cast<double>(s.nucleus_mass));
    j.field("draw_order", s.draw_by_id ? "token id" : "probability");
    if (s.coin >= 0)
        j.field("coin", static_cast<double>(s.coin));
    else
        j.key("coin").null();
    j.field("drawn", s.drawn).field("forced", s.forced);
    j.key("entries").begin_array();
    for (const SamplingEntry& e : s.entries) {
        j.begin_object();
        j.field("id", e.id).field("piece", tok.piece(e.id));
        j.field("logit", static_cast<double>(e.logit));
        j.field("scaled_logit", static_cast<double>(e.scaled_logit));
        j.field("p", static_cast<double>(e.p));
        j.field("p_tempered", static_cast<double>(e.p_tempered));
        j.field("p_top_k", static_cast<double>(e.p_top_k));
        j.field("p_final", static_cast<double>(e.p_final));
        j.field("cdf_from", static_cast<double>(e.cdf_from));
        j.end_object();
    }
    j.end_array();
    // The mass of every token not listed, at each stage.
    j.key("rest").begin_object();
    j.field("p", static_cast<double>(s.rest_p));
    j.field("p_tempered", static_cast<double>(s.rest_tempered));
    j.field("p_top_k", static_cast<double>(s.rest_top_k));
    j.field("p_final", static_cast<double>(s.rest_final));
    j.end_object();
    j.end_object();
}

}  // namespace kvs
