#include "core/session/trace_json.h"

#include <limits>

#include "core/model/toy_model.h"
#include "core/session/session.h"
#include "core/util/json_writer.h"

namespace kvs {

void write_trace_json(std::ostream& os, const Session& s) {
    const Model& m = s.model();
    const ModelConfig& c = m.config();
    const Tokenizer& tok = m.tokenizer();
    JsonWriter j(os);
    j.begin_object();
    j.field("kvscope_trace", 1);
    // How the numbers below index (fields added within version 1; readers ignore unknown fields).
    // Arrays count from 0; tokens[i] is the token at position i + 1, so pos0 and q_pos0 are
    // positions minus 1; layers, heads and steps are numbered from 0 as in the window and lessons.
    j.key("indexing").begin_object();
    j.field("positions_from", 1).field("layers_from", 0).field("heads_from", 0);
    j.field("steps_from", 0).field("pos0", "index into tokens: position - 1");
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
    j.end_object();
    j.field("mode", mode_name(s.config().mode));
    j.key("sampler").begin_object();
    const auto& sc = s.config().sampler;
    j.field("temperature", static_cast<double>(sc.temperature)).field("top_k", sc.top_k);
    j.field("top_p", static_cast<double>(sc.top_p));
    j.field("seed", static_cast<std::int64_t>(sc.seed));
    j.end_object();
    j.key("prompt_tokens").ints(std::span<const int>(s.tokens().data(), s.prompt_len()));
    j.key("tokens").ints(s.tokens());
    j.key("token_pieces").begin_array();
    for (int t : s.tokens()) j.value(tok.piece(t));
    j.end_array();
    j.field("text", s.text());
    j.field("finish_reason", s.finished() ? finish_reason_name(s.finish_reason()) : "");
    j.key("trace_memory").begin_object();
    j.field("payload_bytes", s.trace().payload_bytes()).field("budget_bytes", s.trace().budget());
    j.field("evicted_steps", s.trace().evicted_steps());
    j.end_object();

    j.key("steps").begin_array();
    for (const StepRecord& r : s.trace().steps()) {
        j.begin_object();
        j.field("index", r.index)
            .field("phase", phase_name(r.phase))
            .field("mode", mode_name(r.mode));
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
        j.key("kv").begin_object();
        j.field("n_layers", r.kv.n_layers).field("len", r.kv.len).field("capacity", r.kv.capacity);
        j.field("n_kv_heads", r.kv.n_kv_heads).field("head_dim", r.kv.head_dim);
        j.field("bytes", r.kv.bytes());
        j.end_object();
        j.key("time").begin_object();
        j.field("wall_s", r.wall_seconds).field("forward_s", r.forward_seconds);
        j.field("runs", r.timing_runs).field("forward_min_s", r.forward_min_seconds);
        j.field("forward_max_s", r.forward_max_seconds);
        if (r.graph_seconds > 0) j.field("graph_s", r.graph_seconds);
        j.field("backend", r.backend).field("device", r.device);
        j.key("ops").begin_object();
        for (int i = 0; i < kOpCount; ++i)
            if (r.op_times.calls[i] > 0)
                j.field(op_name(static_cast<Op>(i)), r.op_times.seconds[i]);
        j.end_object();
        j.end_object();
        j.key("counts").begin_object();
        j.field("flops", r.counts.flops).field("matmul_flops", r.counts.matmul_flops);
        j.field("attention_flops", r.counts.attention_flops).field("bytes", r.counts.bytes);
        j.end_object();
        j.key("why_not_q").begin_object();
        j.field("query_rows_computed", r.query_rows_computed);
        j.field("query_rows_used", r.query_rows_used);
        j.field("kv_rows_written", r.kv_rows_written);
        j.field("kv_rows_recomputed", r.kv_rows_recomputed);
        // null when nothing was recomputed, or the trace kept no K/V rows to compare with
        j.field("kv_recomputed_max_delta", r.kv_recomputed_max_delta < 0
                                               ? std::numeric_limits<double>::quiet_NaN()
                                               : r.kv_recomputed_max_delta);
        j.end_object();
        j.field("payload_evicted", r.payload_evicted);
        if (!r.attention.p.empty()) {
            const AttentionRows& a = r.attention;
            j.key("attention").begin_object();
            j.field("q_pos0", a.q_pos0).field("rows", a.rows);
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
                // scores[layer][head][row] before softmax, packed like weights; -inf is null
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
                j.field("seconds",
                        o.seconds < 0 ? std::numeric_limits<double>::quiet_NaN() : o.seconds);
                if (o.timed_with >= 0) j.field("timed_with", o.timed_with);
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
    j.end_array();
    j.end_object();
    os << '\n';
}

}  // namespace kvs
