#include "lessonlib/lesson_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/attention_explain.h"
#include "core/kv_what_if.h"
#include "core/logit_difference.h"
#include "core/model.h"
#include "core/session.h"
#include "core/toy_model.h"
#include "lessonlib/batch_sweep.h"
#include "lessonlib/scale_accounting.h"

namespace kvs {
namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// A vocabulary entry printable on one line: control bytes escaped (llama2.c's BOS is "\n<s>\n").
std::string shown(const std::string& piece) {
    std::string out;
    for (unsigned char ch : piece) {
        if (ch == '\n')
            out += "\\n";
        else if (ch < 0x20 || ch == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned>(ch));
            out += hex;
        } else
            out += static_cast<char>(ch);
    }
    return out;
}

std::string piece_of(const Model& m, int id) {
    return shown(m.tokenizer().piece(id));
}

std::string quoted_piece(const Model& m, int id) {
    std::string s = "'";
    s += piece_of(m, id);
    s += "'";
    return s;
}

std::string head_value(const StepRecord& r, const ModelConfig& c, int L, int H, int row, int rows) {
    const float v = r.head_outputs[(static_cast<std::size_t>(L) * c.n_heads + H) * rows + row];
    if (!std::isfinite(v) || r.attention.is_empty_row(L, H, row)) return "none";
    return fmt("%.4g", v);
}

std::string pad_left(const std::string& s, std::size_t w) {
    return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}
std::string pad_right(const std::string& s, std::size_t w) {
    return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

// The toy's per-token table: one line per row of the step, one column per head of layer 0.
void head_table(std::vector<std::string>& out, const StepRecord& r, const Model& m,
                const std::vector<int>& tokens) {
    const ModelConfig& c = m.config();
    if (r.head_outputs.empty() || r.payload_evicted) return;
    const int rows = static_cast<int>(r.head_outputs.size()) / (c.n_layers * c.n_heads);
    std::string h = "  " + pad_right("token", 12);
    for (int k = 0; k < c.n_heads; ++k)
        h += pad_left(
            m.is_toy() ? std::to_string(k) + " " + toy_head_name(k) : "head " + std::to_string(k),
            10);
    out.push_back("  per-head outputs (layer 0):");
    out.push_back(h);
    const int first_pos = r.pos0 + r.tokens_processed - rows;  // rows are the last ones fed
    for (int row = 0; row < rows; ++row) {
        const int pos = first_pos + row;
        const bool known = pos >= 0 && pos < static_cast<int>(tokens.size());
        std::string line = "  " + pad_right(known ? piece_of(m, tokens[pos]) : "?", 12);
        for (int k = 0; k < c.n_heads; ++k) line += pad_left(head_value(r, c, 0, k, row, rows), 10);
        out.push_back(line);
    }
}

std::string step_line(const StepRecord& r, const Model& m) {
    std::string s = "step " + std::to_string(r.index) + " " + phase_name(r.phase) + " (" +
                    mode_name(r.mode) + "): ";
    if (r.phase == Phase::Prefill)
        s += std::to_string(r.new_tokens.size()) + " prompt tokens in " +
             std::to_string(r.forward_calls) + " forward pass" + (r.forward_calls > 1 ? "es" : "");
    else
        s += "in " + quoted_piece(m, r.new_tokens.at(0));
    s += " -> out " + quoted_piece(m, r.token_out);
    if (!r.top.empty() && r.top[0].id == r.token_out) s += fmt(" (p=%.3f)", r.top[0].prob);
    return s;
}

std::string work_line(const StepRecord& r, int kv_before) {
    const int keys = r.pos0 + r.tokens_processed;
    std::string s = "  " + std::to_string(r.tokens_processed) + " row" +
                    (r.tokens_processed == 1 ? "" : "s") + " through the model";
    if (r.phase == Phase::Prefill && r.tokens_processed > 1)
        s += " (causal mask: the token at position t sees positions 1..t)";
    else
        s += ", last query row over " + std::to_string(keys) + " keys";
    s += "; KV cache " + std::to_string(kv_before) + " -> " + std::to_string(r.kv.len) + " rows (" +
         format_bytes(static_cast<double>(r.kv.bytes())) + ")";
    return s;
}

// "412 us (forward passes: median 405 us of 3 runs, 398 us..1.20 ms)": a time and its spread.
std::string measured(const StepRecord& r) {
    std::string s = format_seconds(r.wall_seconds);
    if (r.timing_runs > 1)
        s += " (forward passes: median " + format_seconds(r.forward_seconds) + " of " +
             std::to_string(r.timing_runs) + " runs, " + format_seconds(r.forward_min_seconds) +
             ".." + format_seconds(r.forward_max_seconds) + ")";
    return s;
}

std::string cost_line(const StepRecord& r) {
    return "  measured " + measured(r) + " on " + r.device + "; counted " +
           format_flops(r.counts.flops) + " (attention " + format_flops(r.counts.attention_flops) +
           "), " + format_bytes(r.counts.bytes) + " moved, " +
           fmt("%.3g FLOP per byte", r.counts.bytes > 0 ? r.counts.flops / r.counts.bytes : 0.0);
}

void describe_steps(std::vector<std::string>& out, const LessonFacts& f, int before,
                    int twin_before) {
    const Session& s = *f.session;
    const Model& m = s.model();
    const auto& steps = s.trace().steps();
    for (std::size_t i = static_cast<std::size_t>(before); i < steps.size(); ++i) {
        const StepRecord& r = steps[i];
        const int kv_before = i == 0 ? 0 : steps[i - 1].kv.len;
        out.push_back(step_line(r, m));
        out.push_back(work_line(r, kv_before));
        out.push_back(cost_line(r));
        if (r.mode == CacheMode::Uncached && r.phase == Phase::Decode)
            out.push_back("  why not Q: " + why_not_q_line(r));
        head_table(out, r, m, s.tokens());
        if (!f.uncached) continue;
        const auto& tw = f.uncached->trace().steps();
        const std::size_t j = static_cast<std::size_t>(twin_before) + (i - before);
        if (j >= tw.size()) continue;
        const StepRecord& u = tw[j];
        out.push_back("  without the cache: " + std::to_string(u.tokens_processed) +
                      " rows recomputed, measured " + measured(u) + ", counted " +
                      format_flops(u.counts.flops) + " (attention " +
                      format_flops(u.counts.attention_flops) + "); chose " +
                      quoted_piece(m, u.token_out) +
                      fmt("; max |logit difference| %.3g", max_logit_difference(r, u)));
        if (u.phase == Phase::Decode)
            out.push_back("  without the cache, why not Q: " + why_not_q_line(u));
    }
    if (steps.size() - static_cast<std::size_t>(before) > 1) {
        // Totals over the whole trace so far, the numbers the lessons compare.
        auto totals = [&](const char* label, const Session& x) {
            double rows = 0, secs = 0, flops = 0;
            for (const auto& r : x.trace().steps()) {
                rows += r.tokens_processed;
                secs += r.wall_seconds;
                flops += r.counts.flops;
            }
            out.push_back(std::string(label) + fmt("%.0f rows through the model, ", rows) +
                          "measured " + format_seconds(secs) + ", counted " + format_flops(flops));
        };
        totals(s.config().mode == CacheMode::Cached ? "total so far, cached:   "
                                                    : "total so far, uncached: ",
               s);
        if (f.uncached) totals("total so far, uncached: ", *f.uncached);
    }
    if (s.finished())
        out.push_back("generation finished: " + std::string(finish_reason_name(s.finish_reason())));
}

void describe_highlight(std::vector<std::string>& out, const LessonFacts& f) {
    const int L = f.highlight_layer, H = f.highlight_head;
    std::string s = "highlight layer " + std::to_string(L) + ", head " + std::to_string(H);
    const ModelConfig& c = f.model->config();
    if (c.n_kv_heads < c.n_heads) s += " (reads K/V head " + std::to_string(H / c.kv_mul()) + ")";
    out.push_back(s);
    if (!f.session || f.session->trace().empty()) return;
    const StepRecord& r = f.session->trace().back();
    if (r.payload_evicted || r.attention.rows == 0) return;
    const Model& m = *f.model;
    const auto& toks = f.session->tokens();
    const int first = std::max(0, r.attention.rows - 6);  // the last rows are enough to read
    for (int row = first; row < r.attention.rows; ++row) {
        const int qpos = r.attention.q_pos0 + row;
        std::string line = "  query " + quoted_piece(m, toks.at(qpos)) + ":";
        if (r.attention.is_empty_row(L, H, row)) {
            out.push_back(line + " no key to attend to (none)");
            continue;
        }
        const auto w = r.attention.row(L, H, row);
        const int n = static_cast<int>(w.size());
        const int from = std::max(0, n - 12);
        if (from > 0) line += " ...";
        for (int k = from; k < n; ++k) {
            line += ' ';
            line += piece_of(m, toks.at(k));
            line += fmt("=%.3f", w[k]);
        }
        out.push_back(line);
    }
}

std::string floats(const std::vector<float>& v, std::size_t most = 6) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size() && i < most; ++i)
        s += (i ? ", " : "") + (std::isnan(v[i]) ? std::string("none") : fmt("%.4g", v[i]));
    return s + (v.size() > most ? ", ...]" : "]");
}

// @explain: the arithmetic of one attention row of the latest step, a line per key (the last 12).
void describe_explain(std::vector<std::string>& out, const LessonFacts& f, const Directive& d) {
    const Session& s = *f.session;
    const Model& m = s.model();
    const int step = static_cast<int>(s.trace().steps().size()) - 1;
    const int row = d.row < 0 ? s.trace().back().attention.rows - 1 : d.row;
    const auto e = explain_attention(s.trace(), m.config(), step, d.n, d.head, row, nullptr);
    if (!e) return;
    const auto& toks = s.tokens();
    std::string head = "head " + std::to_string(e->head);
    if (m.is_toy()) head += std::string(" \"") + toy_head_name(e->head) + "\"";
    out.push_back("inside attention: step " + std::to_string(step) + " (" + phase_name(e->phase) +
                  "), layer " + std::to_string(e->layer) + ", " + head + ", query " +
                  quoted_piece(m, toks.at(e->q_pos)) + " at position " + std::to_string(e->q_pos));
    out.push_back("  out = softmax(q.K^T / sqrt(d_k) + mask) . V with d_k = " +
                  std::to_string(e->head_dim) + fmt(" (x %.4g)", e->scale) +
                  (e->scores_by_rule ? "; the toy's scores come from its rule" : ""));
    for (int j = std::max(0, e->n_keys - 12); j < e->n_keys; ++j)
        out.push_back("  key " + pad_right(quoted_piece(m, toks.at(j)), 12) + " " +
                      pad_right(kv_source_name(e->source[j]), 10) + " q.k " +
                      pad_left(fmt("%.4g", e->raw[j]), 9) + "  scaled " +
                      pad_left(fmt("%.4g", e->scaled[j]), 9) +
                      (e->masked[j] ? "  masked" : "        ") + "  weight " +
                      fmt("%.4g", e->weights[j]));
    out.push_back("  sum of w.v = " + floats(e->output) + "; the model's output " +
                  floats(e->model_output) + (e->empty_row ? " (no key to attend to)" : ""));
    out.push_back("  why not Q: " + why_not_q_line(s.trace().steps().back()));
}

void describe_whatif(std::vector<std::string>& out, const Model& m) {
    const ModelConfig& c = m.config();
    out.push_back("K/V bytes per token = 2 (K, V) x " + std::to_string(c.n_layers) +
                  " layers x kv_heads x " + std::to_string(c.head_dim()) +
                  " head size x 4 bytes (float32)");
    for (const auto& v : kv_what_if(c)) {
        out.push_back(
            "  " + v.kind + fmt(" %2.0f K/V heads", v.n_kv_heads) +
            fmt(", %2.0f query head", v.group) + (v.group == 1 ? " each:  " : "s each: ") +
            format_bytes(static_cast<double>(v.bytes_per_token)) + " per token, " +
            format_bytes(static_cast<double>(v.bytes_per_token) * c.seq_len) + " at " +
            std::to_string(c.seq_len) + " tokens" + (v.is_model ? "   <- this model" : ""));
    }
}

void describe_batch(std::vector<std::string>& out, const BatchTable& t) {
    out.push_back("measured on " + t.device + "; fastest of " + std::to_string(t.plan.repeats) +
                  " runs; decode averaged over " + std::to_string(t.plan.decode_steps) + " steps");
    out.push_back(
        "  batch | prefill rows   time/step    rows/s | decode rows/step   time/step    rows/s");
    for (int B : t.plan.sizes) {
        const BatchRow* p = t.find(Phase::Prefill, B);
        const BatchRow* d = t.find(Phase::Decode, B);
        if (!p || !d) continue;
        char buf[200];
        std::snprintf(buf, sizeof buf, "  %5d | %12.0f %11s %9s | %16.1f %11s %9s", B,
                      p->rows_per_step, format_seconds(p->seconds_per_step).c_str(),
                      format_si(p->rows_per_second()).c_str(), d->rows_per_step,
                      format_seconds(d->seconds_per_step).c_str(),
                      format_si(d->rows_per_second()).c_str());
        out.push_back(buf);
    }
}

void describe_scale(std::vector<std::string>& out, const ScaleReport& r) {
    const ModelConfig& c = r.model.config;
    const ScaleQuery& q = r.query;
    out.push_back(r.model.name + ": dim " + std::to_string(c.dim) + ", " +
                  std::to_string(c.n_layers) + " layers, " + std::to_string(c.n_heads) +
                  " heads, " + std::to_string(c.n_kv_heads) + " K/V heads, hidden " +
                  std::to_string(c.hidden_dim) + ", vocab " + std::to_string(c.vocab_size) + " (" +
                  r.model.source + ")");
    out.push_back(r.gpu.name + ": " + format_si(r.gpu.peak_flops) + "FLOP/s dense 16-bit, " +
                  format_si(r.gpu.bandwidth) + "B/s, " + format_si(r.gpu.memory) + "B (" +
                  r.gpu.source + ")");
    out.push_back("context " + std::to_string(q.context) + " tokens, batch " +
                  std::to_string(q.batch) + ", " + std::to_string(q.bytes_per_value) +
                  " bytes per value");
    out.push_back("weights: " + format_si(r.params) + " parameters x " +
                  std::to_string(q.bytes_per_value) + " B = " + format_si(r.weight_bytes) + "B");
    out.push_back("KV cache: 2 x " + std::to_string(c.n_layers) + " x " +
                  std::to_string(c.n_kv_heads) + " x " + std::to_string(c.head_dim()) + " x " +
                  std::to_string(q.bytes_per_value) + " B = " + format_bytes(r.kv_bytes_per_token) +
                  " per token; x " + std::to_string(q.context) + " tokens x " +
                  std::to_string(q.batch) + " = " + format_si(r.kv_bytes) + "B");
    out.push_back(std::string("memory: weights + KV = ") + format_si(r.weight_bytes + r.kv_bytes) +
                  "B, " + (r.fits ? "fits" : "does NOT fit") + " in " + format_si(r.gpu.memory) +
                  "B");
    out.push_back("ridge point: " + format_si(r.gpu.peak_flops) + "FLOP/s / " +
                  format_si(r.gpu.bandwidth) + "B/s = " + fmt("%.0f", r.ridge) + " FLOP per byte");
    auto phase = [&](const char* name, const PhaseCost& p) {
        out.push_back(std::string(name) + ": " + format_si(p.flops) + "FLOP (attention " +
                      fmt("%.1f%%", 100 * p.attention_flops / p.flops) + "), " +
                      format_si(p.bytes) + "B moved, intensity " + fmt("%.1f", p.intensity) +
                      " FLOP/B -> compute " + format_seconds(p.compute_seconds) + ", memory " +
                      format_seconds(p.memory_seconds) + ": " +
                      (p.memory_bound ? "memory-bound" : "compute-bound") + ", at least " +
                      format_seconds(p.seconds()));
    };
    phase("prefill (all prompts, one pass)", r.prefill);
    phase("decode step (one token per sequence)", r.decode);
    out.push_back(
        "FLOPs = 2 x rows x weights (linear layers) + 4 x dim x keys x layers (attention) "
        "+ small ops; bytes = weights once + K/V rows read + written (core/counts.h)");
}

}  // namespace

std::vector<std::string> describe_action(const Directive& d, const LessonFacts& f, int steps_before,
                                         int twin_steps_before) {
    std::vector<std::string> out;
    switch (d.kind) {
        case DirectiveKind::Model: {
            if (!f.model) break;
            const Model& m = *f.model;
            const ModelConfig& c = m.config();
            out.push_back("model " + m.name() + ": " + c.describe());
            std::string line = fmt("%.0f parameters", static_cast<double>(m.parameter_count()));
            for (const auto& v : kv_what_if(c))
                if (v.is_model && v.kind != "MHA")
                    line += "; " + std::to_string(v.group) + " query heads share each K/V head (" +
                            v.kind + ")";
            out.push_back(line);
            break;
        }
        case DirectiveKind::Prompt: {
            if (!f.session) break;
            const Session& s = *f.session;
            std::string line = "prompt: " + std::to_string(s.prompt_len()) + " tokens:";
            for (int i = 0; i < s.prompt_len(); ++i)
                line += " [" + piece_of(s.model(), s.tokens()[i]) + "]";
            out.push_back(line);
            break;
        }
        case DirectiveKind::Limit:
            out.push_back("at most " + std::to_string(d.n) + " new tokens");
            break;
        case DirectiveKind::Cache:
            out.push_back(d.cache == CacheView::On
                              ? "KV cache on: a decode step feeds one token and reads the cache"
                          : d.cache == CacheView::Off
                              ? "KV cache off: a decode step recomputes the whole sequence"
                              : "compare: a twin session takes the same steps without the cache");
            break;
        case DirectiveKind::Prefill:
        case DirectiveKind::Decode:
            if (!f.session) break;
            describe_steps(out, f, steps_before, twin_steps_before);
            if (d.kind == DirectiveKind::Decode &&
                f.session->trace().steps().size() == static_cast<std::size_t>(steps_before))
                out.push_back(std::string("no step taken: generation had finished (") +
                              finish_reason_name(f.session->finish_reason()) + ")");
            break;
        case DirectiveKind::Reset:
            out.push_back("back to the prompt: cache emptied, trace cleared");
            break;
        case DirectiveKind::Highlight:
            if (f.model) describe_highlight(out, f);
            break;
        case DirectiveKind::Explain:
            if (f.session) describe_explain(out, f, d);
            break;
        case DirectiveKind::Show:
            out.push_back("panel: " + d.arg);
            break;
        case DirectiveKind::WhatIf:
            if (f.model) describe_whatif(out, *f.model);
            break;
        case DirectiveKind::Batch:
            if (f.batch) describe_batch(out, *f.batch);
            break;
        case DirectiveKind::Scale:
            if (f.scale) describe_scale(out, *f.scale);
            break;
        case DirectiveKind::Expect:
            break;
    }
    return out;
}

}  // namespace kvs
