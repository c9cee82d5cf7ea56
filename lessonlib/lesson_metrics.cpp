#include "lessonlib/lesson_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "core/model/kv_what_if.h"
#include "core/model/model.h"
#include "core/model/softmax.h"
#include "core/session/attention_explain.h"
#include "core/session/gpu_step_view.h"
#include "core/session/logit_difference.h"
#include "core/session/session.h"
#include "core/session/why_not_q.h"
#include "core/tokenizers/toy_vocabulary.h"
#include "core/util/error.h"
#include "core/util/numbering.h"
#include "lessonlib/batch_sweep.h"
#include "lessonlib/lesson_serve.h"
#include "lessonlib/scale_accounting.h"

namespace kvs {
namespace {

// Metrics that read one step of a session: name, help, value of the step.
// serve("field")'s help: the fields of lessonlib/lesson_serve.h, one list.
const char* serve_help() {
    static const std::string h = [] {
        std::string s = "a figure of the last @serve (core/serving/serve_run.h):";
        for (const ServeField& f : serve_fields()) s += std::string(" ") + f.name;
        return s;
    }();
    return h.c_str();
}

const std::vector<LessonMetric>& table() {
    static const std::vector<LessonMetric> t = {
        // The driven session, one step (index optional).
        {"token", 0, 1, "[step]", "the piece of the token chosen at the step", true},
        {"phase", 0, 1, "[step]", "\"prefill\" or \"decode\"", true},
        {"rows", 0, 1, "[step]", "rows (tokens) through the model at the step", true},
        {"forward_calls", 0, 1, "[step]", "forward passes at the step", true},
        {"attn_rows", 0, 1, "[step]", "attention rows the step computed and kept", true},
        {"keys", 0, 1, "[step]", "keys the step's last query row attended to", true},
        {"kv_len", 0, 1, "[step]", "K/V rows in the cache after the step", true},
        {"kv_growth", 0, 1, "[step]", "K/V rows the cache grew by at the step", true},
        {"kv_bytes", 0, 1, "[step]", "bytes of the K/V cache after the step", true},
        {"time", 0, 1, "[step]", "measured seconds of the step", true, true},
        {"flops", 0, 1, "[step]", "counted FLOPs of the step", true},
        {"matmul_flops", 0, 1, "[step]", "counted FLOPs of the linear layers", true},
        {"attn_flops", 0, 1, "[step]", "counted FLOPs of attention (q.k and p.v)", true},
        {"bytes", 0, 1, "[step]", "counted bytes moved by the step", true},
        // The driven session, whole.
        {"steps", 0, 0, "", "steps taken so far (prefill included)", true},
        {"prompt_len", 0, 0, "", "prompt tokens (BOS included where the model has one)", true},
        {"generated", 0, 0, "", "tokens generated so far", true},
        {"text", 0, 0, "", "the generated text", true},
        {"finish", 0, 0, "", "why generation stopped, or \"running\"", true},
        {"total_rows", 0, 0, "", "rows through the model over all steps", true},
        {"total_time", 0, 0, "", "measured seconds of all steps", true, true},
        {"total_flops", 0, 0, "", "counted FLOPs of all steps", true},
        {"decode_time", 0, 0, "", "measured seconds of the decode steps", true, true},
        {"decode_flops", 0, 0, "", "counted FLOPs of the decode steps", true},
        {"decode_attn_flops", 0, 0, "", "counted attention FLOPs of the decode steps", true},
        {"head", 3, 3, "layer, head, position",
         "a head's scalar output at the latest step (toy model) for the query at that position; "
         "none for an empty row",
         true},
        {"weight", 4, 4, "layer, head, position, key position",
         "an attention weight at the latest step", true},
        {"logit", 1, 1, "\"piece\"", "the logit of a vocabulary entry at the latest step", true},
        {"prob", 1, 1, "\"piece\"", "its probability (softmax at temperature 1)", true},
        {"top", 1, 1, "k", "the k-th most likely piece at the latest step (0 = best)", true},
        // Inside one attention row of the latest step (core/session/attention_explain.h).
        {"score", 4, 4, "layer, head, position, key position",
         "the raw score q.k (the toy: its rule's 0 or -inf) at the latest step", true},
        {"scaled_score", 4, 4, "layer, head, position, key position", "the score times 1/sqrt(d_k)",
         true},
        {"softmax_error", 3, 3, "layer, head, position",
         "largest |softmax of the shown scores - the weights the model used|", true},
        {"output_error", 3, 3, "layer, head, position",
         "largest |sum of w.v - the attention output the model used|", true},
        {"query_rows_computed", 0, 1, "[step]", "rows of Q the step computed", true},
        {"query_rows_used", 0, 1, "[step]", "rows of Q a cached run needs (prompt, then 1)", true},
        {"kv_recomputed", 0, 1, "[step]", "K/V rows the step recomputed that the cache held", true},
        // Each layer's query rows (core/session/why_not_q.h): computed = for output + build +
        // rebuild
        // + thrown away.
        {"q_for_output", 1, 2, "layer, [step]",
         "query rows of the layer whose output leads to the next token", true},
        {"q_build_kv", 1, 2, "layer, [step]",
         "query rows of the layer that only build the next layer's new K/V rows", true},
        {"q_rebuild_kv", 1, 2, "layer, [step]",
         "query rows of the layer that only rebuild next-layer K/V rows the cache held", true},
        {"q_thrown_away", 1, 2, "layer, [step]",
         "query rows of the layer whose output nothing reads (the last layer's earlier rows)",
         true},
        // The earlier tokens' K/V rows after one token more, per layer (measured; none when the
        // step recomputed nothing). Causal: 0. Bidirectional (@cache bidirectional, the twin):
        // 0 in layer 0, above 0 from layer 1 on.
        {"kv_delta_k", 1, 2, "layer, [step]",
         "measured max |K recomputed - K the cache held| in the layer", true},
        {"kv_delta_v", 1, 2, "layer, [step]",
         "measured max |V recomputed - V the cache held| in the layer", true},
        {"kv_recomputed_delta", 0, 1, "[step]",
         "measured max |recomputed - cached| over those rows (none when not compared)", true},
        {"inf", 0, 0, "", "infinity, to compare with the toy's masked scores: -inf", false},
        // Compare mode.
        {"max_logit_diff", 0, 0, "",
         "largest |logit difference| cached vs uncached over the steps both took", false},
        {"same_tokens", 0, 0, "", "1 when cached and uncached chose the same tokens", false},
        // The model.
        {"n_layers", 0, 0, "", "layers", false},
        {"n_heads", 0, 0, "", "query heads", false},
        {"n_kv_heads", 0, 0, "", "key/value heads", false},
        {"head_dim", 0, 0, "", "head size", false},
        {"dim", 0, 0, "", "residual width", false},
        {"hidden_dim", 0, 0, "", "SwiGLU width", false},
        {"vocab", 0, 0, "", "vocabulary size", false},
        {"context", 0, 0, "", "context length", false},
        {"params", 0, 0, "", "parameters", false},
        {"kv_kind", 0, 0, "", "\"MHA\", \"GQA\" or \"MQA\"", false},
        {"toy_projection", 2, 2, "\"word\", head",
         "the toy's projection weight of a word for a head's output (core/toy_vocabulary.cpp)",
         false},
        {"kv_per_token", 1, 1, "\"mha\"|\"mqa\"|\"model\"",
         "float32 K/V bytes per token of the model's shape with that many K/V heads", false},
        // @batch and @scale.
        {"batch_time", 2, 2, "\"prefill\"|\"decode\", B", "measured seconds per step", false, true},
        {"batch_rows", 2, 2, "\"prefill\"|\"decode\", B", "rows per step", false},
        {"batch_rate", 2, 2, "\"prefill\"|\"decode\", B", "rows per second", false, true},
        {"batch_flops", 2, 2, "\"prefill\"|\"decode\", B", "counted FLOPs per step", false},
        {"scale", 1, 1, "\"field\"",
         "a figure of the last @scale: params weight_bytes kv_bytes kv_bytes_per_token ridge "
         "prefill_flops prefill_attn_flops prefill_bytes prefill_intensity prefill_seconds "
         "prefill_bound decode_flops decode_attn_flops decode_bytes decode_intensity "
         "decode_seconds decode_bound fits",
         false},
        {"gpu", 1, 1, "\"field\"",
         "a count of the last @gpu (the emulated CUDA backend): prefill_rows prefill_launches "
         "decode_launches decode_syncs decode_copies graph_launches graph_kernels fused_kernels",
         false},
        {"serve", 1, 1, "\"field\"", serve_help(), false},
        {"serve_block", 2, 2, "request, position",
         "the block holding a position (from 1) of a request (from 1) in the last @serve's "
         "printed block tables: entry (position - 1) / block size",
         false},
        {"gpu_time", 1, 1, "\"cpu\"|\"device\"|\"graph\"|\"fused\"",
         "the last @gpu's measured decode step: on the CPU, on the GPU op by op, as a CUDA Graph, "
         "fused (none where no GPU answered)",
         false, true},
    };
    return t;
}

const LessonMetric* find(const std::string& name) {
    for (const auto& m : table())
        if (name == m.name) return &m;
    return nullptr;
}

double num(const LessonValue& v, const char* what) {
    if (!v.is_number()) throw Error(std::string(what) + " must be a number, not " + v.to_string());
    return v.num;
}
// The one double -> int conversion of the lesson library: a finite whole number within what an
// index or a count can be. 1e300, NaN and -inf are errors in words, never a cast out of range (UB).
int whole(const LessonValue& v, const char* what) {
    constexpr double kLimit = 1e9;
    const double d = num(v, what);
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > kLimit)
        throw Error(std::string(what) + " must be a whole number from -1e9 to 1e9, not " +
                    v.to_string());
    return static_cast<int>(d);
}
const std::string& str(const LessonValue& v, const char* what) {
    if (!v.is_string())
        throw Error(std::string(what) + " must be a \"string\", not " + v.to_string());
    return v.str;
}

// The one index resolution every metric uses: `v` checked by whole(), negative counting from the
// end, then range-checked against `n`. Callers use the value returned, never `v` itself.
int index_of(const LessonValue& v, int n, const char* what) {
    const int i = whole(v, what);
    const int j = i < 0 ? n + i : i;
    if (j < 0 || j >= n)
        throw Error(std::string(what) + " " + std::to_string(i) + " does not exist (there are " +
                    std::to_string(n) + ")");
    return j;
}

// A query or key named by its position (from 1, core/util/numbering.h), as its index among
// `count` items whose first is at token index `first`; a negative value counts from the end
// (-1: the newest row, the last key). Range-checked, saying which positions there are.
int at_position(const LessonValue& v, int first, int count, const char* what) {
    const int i = whole(v, what);
    const int j = i < 0 ? count + i : index_of_position(i) - first;
    if (j < 0 || j >= count) {
        std::string held = count <= 0 ? std::string("none")
                           : count == 1
                               ? "position " + std::to_string(position_of_index(first))
                               : "positions " + std::to_string(position_of_index(first)) + ".." +
                                     std::to_string(position_of_index(first + count - 1));
        throw Error(std::string(what) + " " + std::to_string(i) +
                    " is not one the latest step holds (" + held + ")");
    }
    return j;
}

const StepRecord& step_of(const Session& s, const std::vector<LessonValue>& args) {
    const auto& steps = s.trace().steps();
    if (steps.empty()) throw Error("no step has run yet");
    const int n = static_cast<int>(steps.size());
    return steps[args.empty() ? n - 1 : index_of(args[0], n, "step")];
}

const StepRecord& latest_with_payload(const Session& s) {
    const auto& steps = s.trace().steps();
    if (steps.empty()) throw Error("no step has run yet");
    if (steps.back().payload_evicted) throw Error("the latest step's payload was dropped");
    return steps.back();
}

int token_id(const Model& m, const std::string& piece) {
    const Tokenizer& t = m.tokenizer();
    for (int i = 0; i < t.vocab_size(); ++i)
        if (t.piece(i) == piece) return i;
    throw Error("no \"" + piece + "\" in " + m.name() + "'s vocabulary");
}

LessonValue session_metric(const std::string& name, const Session& s,
                           const std::vector<LessonValue>& args) {
    using V = LessonValue;
    const Model& m = s.model();
    const auto& steps = s.trace().steps();
    auto sum = [&](bool decode_only, auto field) {
        double t = 0;
        for (const auto& r : steps)
            if (!decode_only || r.phase == Phase::Decode) t += field(r);
        return V::number(t);
    };
    if (name == "steps") return V::number(static_cast<double>(steps.size()));
    if (name == "prompt_len") return V::number(s.prompt_len());
    if (name == "generated") return V::number(s.generated());
    if (name == "finish") return V::string(finish_reason_name(s.finish_reason()));
    if (name == "text") {
        std::string out;
        const auto& toks = s.tokens();
        const auto& stops = m.stop_tokens();
        for (std::size_t i = static_cast<std::size_t>(s.prompt_len()); i < toks.size(); ++i) {
            if (std::find(stops.begin(), stops.end(), toks[i]) != stops.end()) break;
            out += m.tokenizer().decode(toks[i - 1], toks[i]);
        }
        return V::string(out);
    }
    if (name == "total_rows")
        return sum(false, [](const StepRecord& r) { return double(r.tokens_processed); });
    if (name == "total_time") return sum(false, [](const StepRecord& r) { return r.wall_seconds; });
    if (name == "total_flops")
        return sum(false, [](const StepRecord& r) { return r.counts.flops; });
    if (name == "decode_time") return sum(true, [](const StepRecord& r) { return r.wall_seconds; });
    if (name == "decode_flops")
        return sum(true, [](const StepRecord& r) { return r.counts.flops; });
    if (name == "decode_attn_flops")
        return sum(true, [](const StepRecord& r) { return r.counts.attention_flops; });

    if (name == "head" || name == "weight") {
        const StepRecord& r = latest_with_payload(s);
        const ModelConfig& c = m.config();
        const int L = index_of(args[0], c.n_layers, "layer");
        const int H = index_of(args[1], c.n_heads, "head");
        const int rows = name == "head"
                             ? (r.head_outputs.empty() ? 0
                                                       : static_cast<int>(r.head_outputs.size()) /
                                                             (c.n_layers * c.n_heads))
                             : r.attention.rows;
        if (rows == 0)
            throw Error(name == "head" ? "this model reports no per-head outputs (the toy does)"
                                       : "the latest step kept no attention weights");
        const int row = at_position(args[2], r.attention.q_pos0, rows, "query position");
        if (name == "head") {
            const float v =
                r.head_outputs[(static_cast<std::size_t>(L) * c.n_heads + H) * rows + row];
            if (!std::isfinite(v) || r.attention.is_empty_row(L, H, row)) return V::none();
            return V::number(v);
        }
        const auto w = r.attention.row(L, H, row);
        const int key = at_position(args[3], 0, static_cast<int>(w.size()), "key position");
        return V::number(w[key]);
    }
    if (name == "score" || name == "scaled_score" || name == "softmax_error" ||
        name == "output_error") {
        const int step = static_cast<int>(steps.size()) - 1;
        if (step < 0) throw Error("no step has run yet");
        std::string why;
        // The same index resolution as weight(): negative from the end, range-checked here.
        const ModelConfig& c = m.config();
        const int L = index_of(args[0], c.n_layers, "layer");
        const int H = index_of(args[1], c.n_heads, "head");
        const AttentionRows& a = steps.back().attention;  // no rows: dropped; explain says so
        const int row = a.rows > 0 ? at_position(args[2], a.q_pos0, a.rows, "query position")
                                   : whole(args[2], "query position");
        const auto e = explain_attention(s.trace(), c, step, L, H, row, &why);
        if (!e) throw Error(why);
        if (name == "softmax_error") return V::number(softmax_error(*e));
        if (name == "output_error") return V::number(output_error(*e));
        const int key = at_position(args[3], 0, e->n_keys, "key position");
        return V::number(name == "score" ? e->raw[key] : e->scaled[key]);
    }
    if (name == "logit" || name == "prob") {
        const StepRecord& r = latest_with_payload(s);
        if (r.logits.empty()) throw Error("the latest step kept no logits");
        const int id = token_id(m, str(args[0], name.c_str()));
        if (name == "logit") return V::number(r.logits[id]);
        std::vector<double> p(r.logits.begin(), r.logits.end());
        softmax(std::span<double>(p));
        return V::number(p[id]);
    }
    if (name == "top") {
        const StepRecord& r = step_of(s, {});
        const int k = index_of(args[0], static_cast<int>(r.top.size()), "rank");
        return V::string(m.tokenizer().piece(r.top[k].id));
    }

    if (name == "kv_delta_k" || name == "kv_delta_v") {
        const int L = index_of(args[0], m.config().n_layers, "layer");
        const StepRecord& r = step_of(s, std::vector<LessonValue>(args.begin() + 1, args.end()));
        const auto& d = name == "kv_delta_k" ? r.kv_delta_k : r.kv_delta_v;
        return L < static_cast<int>(d.size()) ? V::number(d[L]) : V::none();
    }
    if (name.rfind("q_", 0) == 0) {
        const int layers = m.config().n_layers;
        const int L = index_of(args[0], layers, "layer");
        const StepRecord& r = step_of(s, std::vector<LessonValue>(args.begin() + 1, args.end()));
        const QueryRowUse u = query_row_use(r, layers)[L];
        if (name == "q_for_output") return V::number(u.for_output);
        if (name == "q_build_kv") return V::number(u.build_next_kv);
        if (name == "q_rebuild_kv") return V::number(u.rebuild_next_kv);
        if (name == "q_thrown_away") return V::number(u.thrown_away);
    }

    const StepRecord& r = step_of(s, args);
    if (name == "token") return V::string(m.tokenizer().piece(r.token_out));
    if (name == "phase") return V::string(phase_name(r.phase));
    if (name == "rows") return V::number(r.tokens_processed);
    if (name == "forward_calls") return V::number(r.forward_calls);
    if (name == "attn_rows") {
        if (r.payload_evicted) throw Error("that step's payload was dropped");
        return V::number(r.attention.rows);
    }
    if (name == "keys") return V::number(r.pos0 + r.tokens_processed);
    if (name == "query_rows_computed") return V::number(r.query_rows_computed);
    if (name == "query_rows_used") return V::number(r.query_rows_used);
    if (name == "kv_recomputed") return V::number(r.kv_rows_recomputed);
    if (name == "kv_recomputed_delta")
        return r.kv_recomputed_max_delta < 0 ? V::none() : V::number(r.kv_recomputed_max_delta);
    if (name == "kv_len") return V::number(r.kv.len);
    if (name == "kv_growth") {
        const int before = r.index == 0 ? 0 : steps[r.index - 1].kv.len;
        return V::number(r.kv.len - before);
    }
    if (name == "kv_bytes") return V::number(static_cast<double>(r.kv.bytes()));
    if (name == "time") return V::number(r.wall_seconds);
    if (name == "flops") return V::number(r.counts.flops);
    if (name == "matmul_flops") return V::number(r.counts.matmul_flops);
    if (name == "attn_flops") return V::number(r.counts.attention_flops);
    if (name == "bytes") return V::number(r.counts.bytes);
    throw Error("metric '" + name + "' is not readable from a session");
}

LessonValue compare_metric(const std::string& name, const LessonFacts& f) {
    if (!f.session || !f.uncached) throw Error(name + " needs @cache compare and a prompt");
    const auto& a = f.session->trace().steps();
    const auto& b = f.uncached->trace().steps();
    const std::size_t n = std::min(a.size(), b.size());
    if (n == 0) throw Error("no step has run yet");
    if (name == "same_tokens")
        return LessonValue::number(f.session->tokens() == f.uncached->tokens() ? 1 : 0);
    double diff = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i].logits.empty() || b[i].logits.empty())
            throw Error("step " + std::to_string(i) + " kept no logits");
        diff = std::max(diff, max_logit_difference(a[i], b[i]));
    }
    return LessonValue::number(diff);
}

LessonValue model_metric(const std::string& name, const Model& m,
                         const std::vector<LessonValue>& args) {
    const ModelConfig& c = m.config();
    auto n = [](double v) { return LessonValue::number(v); };
    if (name == "n_layers") return n(c.n_layers);
    if (name == "n_heads") return n(c.n_heads);
    if (name == "n_kv_heads") return n(c.n_kv_heads);
    if (name == "head_dim") return n(c.head_dim());
    if (name == "dim") return n(c.dim);
    if (name == "hidden_dim") return n(c.hidden_dim);
    if (name == "vocab") return n(c.vocab_size);
    if (name == "context") return n(c.seq_len);
    if (name == "params") return n(static_cast<double>(m.parameter_count()));
    const auto variants = kv_what_if(c);
    if (name == "kv_kind") {
        for (const auto& v : variants)
            if (v.is_model) return LessonValue::string(v.kind);
        throw Error("the model's K/V layout is not among its what-if variants");
    }
    const std::string& kind = str(args[0], "kv_per_token");
    for (const auto& v : variants)
        if ((kind == "mha" && v.kind == "MHA") || (kind == "mqa" && v.kind == "MQA") ||
            (kind == "model" && v.is_model))
            return n(static_cast<double>(v.bytes_per_token));
    throw Error("kv_per_token takes \"mha\", \"mqa\" or \"model\", not \"" + kind + "\"");
}

LessonValue batch_metric(const std::string& name, const BatchTable& t,
                         const std::vector<LessonValue>& args) {
    const std::string& ph = str(args[0], "phase");
    if (ph != "prefill" && ph != "decode") throw Error("phase is \"prefill\" or \"decode\"");
    const int B = whole(args[1], "batch size");
    const BatchRow* r = t.find(ph == "prefill" ? Phase::Prefill : Phase::Decode, B);
    if (!r) throw Error("@batch did not measure batch size " + std::to_string(B));
    if (name == "batch_time") return LessonValue::number(r->seconds_per_step);
    if (name == "batch_rows") return LessonValue::number(r->rows_per_step);
    if (name == "batch_flops") return LessonValue::number(r->flops_per_step);
    return LessonValue::number(r->rows_per_second());
}

LessonValue gpu_metric(const GpuStepView& g, const std::string& field) {
    auto n = [](double v) { return LessonValue::number(v); };
    if (field == "prefill_rows") return n(g.prefill_rows);
    if (field == "prefill_launches") return n(g.prefill_launches);
    if (field == "decode_launches") return n(g.decode_launches);
    if (field == "decode_syncs") return n(g.decode_syncs);
    if (field == "decode_copies") return n(g.decode_copies);
    if (field == "graph_launches") return n(g.graph_launches);
    if (field == "graph_kernels") return n(g.graph_kernels);
    if (field == "fused_kernels") return n(g.fused_kernels);
    throw Error("@gpu has no count \"" + field + "\"");
}

LessonValue gpu_time_metric(const GpuStepView& g, const std::string& which) {
    const double t = which == "cpu"      ? g.cpu_seconds
                     : which == "device" ? g.device_seconds
                     : which == "graph"  ? g.graph_seconds
                     : which == "fused"  ? g.fused_seconds
                                         : -2;
    if (t == -2)
        throw Error("gpu_time takes \"cpu\", \"device\", \"graph\" or \"fused\", not \"" + which +
                    "\"");
    return t < 0 ? LessonValue::none() : LessonValue::number(t);
}

LessonValue scale_metric(const ScaleReport& r, const std::string& field) {
    auto n = [](double v) { return LessonValue::number(v); };
    auto bound = [](const PhaseCost& p) {
        return LessonValue::string(p.memory_bound ? "memory" : "compute");
    };
    if (field == "params") return n(r.params);
    if (field == "weight_bytes") return n(r.weight_bytes);
    if (field == "kv_bytes") return n(r.kv_bytes);
    if (field == "kv_bytes_per_token") return n(r.kv_bytes_per_token);
    if (field == "ridge") return n(r.ridge);
    if (field == "prefill_flops") return n(r.prefill.flops);
    if (field == "prefill_attn_flops") return n(r.prefill.attention_flops);
    if (field == "prefill_bytes") return n(r.prefill.bytes);
    if (field == "prefill_intensity") return n(r.prefill.intensity);
    if (field == "prefill_seconds") return n(r.prefill.seconds());
    if (field == "prefill_bound") return bound(r.prefill);
    if (field == "decode_flops") return n(r.decode.flops);
    if (field == "decode_attn_flops") return n(r.decode.attention_flops);
    if (field == "decode_bytes") return n(r.decode.bytes);
    if (field == "decode_intensity") return n(r.decode.intensity);
    if (field == "decode_seconds") return n(r.decode.seconds());
    if (field == "decode_bound") return bound(r.decode);
    if (field == "fits") return n(r.fits ? 1 : 0);
    throw Error("@scale has no figure \"" + field + "\"");
}

}  // namespace

const std::vector<LessonMetric>& lesson_metrics() {
    return table();
}

MetricName split_metric_name(const std::string& name) {
    for (const auto& [prefix, twin] :
         {std::pair<std::string, TwinPrefix>{"uncached_", TwinPrefix::Uncached},
          {"bidirectional_", TwinPrefix::Bidirectional}})
        if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0)
            return {twin, name.substr(prefix.size())};
    return {TwinPrefix::None, name};
}

std::string validate_lesson_metric(const std::string& name, int n_args) {
    const MetricName n = split_metric_name(name);
    const bool twin = n.twin != TwinPrefix::None;
    const LessonMetric* m = find(n.base);
    if (!m || (twin && !m->session)) return "unknown metric '" + name + "'";
    if (n_args < m->min_args || n_args > m->max_args)
        return name + " takes " +
               (m->max_args == 0 ? std::string("no arguments") : std::string("(") + m->args + ")");
    return {};
}

bool is_timed_lesson_metric(const std::string& name, const std::vector<LessonValue>& args) {
    const std::string base = split_metric_name(name).base;
    const LessonMetric* m = find(base);
    if (m && m->timed) return true;
    // A metric that reads a figure by name reads a time when that figure is one.
    if (base == "serve" && args.size() == 1 && args[0].is_string())
        for (const ServeField& f : serve_fields())
            if (args[0].str == f.name) return f.timed;
    return false;
}

LessonValue read_lesson_metric(const LessonFacts& f, const std::string& name,
                               const std::vector<LessonValue>& args) {
    const std::string why = validate_lesson_metric(name, static_cast<int>(args.size()));
    if (!why.empty()) throw Error(why);
    const MetricName n = split_metric_name(name);
    const bool twin = n.twin != TwinPrefix::None;
    const std::string& base = n.base;
    const LessonMetric& m = *find(base);
    if (m.session) {
        // bidirectional_ names the session without the causal mask: only that view has one.
        if (n.twin == TwinPrefix::Bidirectional && f.cache != CacheView::Bidirectional)
            throw Error(name + " needs @cache bidirectional");
        const Session* s = twin ? f.uncached : f.session;
        if (!s) throw Error(twin ? name + " needs @cache compare" : name + " needs a prompt");
        return session_metric(base, *s, args);
    }
    if (base == "max_logit_diff" || base == "same_tokens") return compare_metric(base, f);
    if (base.rfind("batch_", 0) == 0) {
        if (!f.batch) throw Error(name + " needs a @batch run first");
        return batch_metric(base, *f.batch, args);
    }
    if (base == "scale") {
        if (!f.scale) throw Error("scale() needs a @scale first");
        return scale_metric(*f.scale, str(args[0], "scale"));
    }
    if (base == "serve_block") {
        if (!f.serve) throw Error("serve_block() needs a @serve first");
        return LessonValue::number(
            serve_block(*f.serve, whole(args[0], "request"), whole(args[1], "position")));
    }
    if (base == "serve") {
        if (!f.serve) throw Error("serve() needs a @serve first");
        return LessonValue::number(serve_field(*f.serve, str(args[0], "serve")));
    }
    if (base == "gpu" || base == "gpu_time") {
        if (!f.gpu) throw Error(name + "() needs a @gpu first");
        const std::string& field = str(args[0], name.c_str());
        return base == "gpu" ? gpu_metric(*f.gpu, field) : gpu_time_metric(*f.gpu, field);
    }
    if (base == "toy_projection") {
        const std::string& word = str(args[0], "toy_projection");
        const int head = index_of(args[1], kToyHeads, "head");
        for (const ToyWord& t : toy_vocabulary())
            if (word == t.text) return LessonValue::number(t.projection[head]);
        throw Error("no \"" + word + "\" in the toy's vocabulary");
    }
    if (base == "inf") return LessonValue::number(std::numeric_limits<double>::infinity());
    if (!f.model) throw Error(name + " needs a model (@model)");
    return model_metric(base, *f.model, args);
}

}  // namespace kvs
