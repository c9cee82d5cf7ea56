#include "lessonlib/lesson_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/model/kv_what_if.h"
#include "core/model/model.h"
#include "core/model/toy_model.h"
#include "core/session/attention_explain.h"
#include "core/session/gpu_step_view.h"
#include "core/session/logit_difference.h"
#include "core/session/session.h"
#include "core/session/why_not_q.h"
#include "core/util/numbering.h"
#include "lessonlib/batch_sweep.h"
#include "lessonlib/engine_messages.h"
#include "lessonlib/lesson_serve.h"
#include "lessonlib/scale_accounting.h"

namespace kvs {
namespace {

// A device's words inside a Chinese sentence: translated, with a space on each side that meets a
// Latin letter ("在 CPU（1 个线程）上").
std::string zh_device(const std::string& device) {
    const std::string d = engine_message(device, ReportLang::Zh);
    const auto latin = [](char c) { return static_cast<unsigned char>(c) < 0x80; };
    if (d.empty()) return d;
    return (latin(d.front()) ? " " : "") + d + (latin(d.back()) ? " " : "");
}

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

std::string head_value(const StepRecord& r, const ModelConfig& c, int L, int H, int row, int rows,
                       const Words& w) {
    const float v = r.head_outputs[(static_cast<std::size_t>(L) * c.n_heads + H) * rows + row];
    if (!std::isfinite(v) || r.attention.is_empty_row(L, H, row)) return w("none", "无");
    return fmt("%.4g", v);
}

std::string pad_left(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
std::string pad_right(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

const char* phase_words(Phase p, const Words& w) {
    return p == Phase::Prefill ? w("prefill", "预填充") : w("decode", "解码");
}
const char* mode_words(CacheMode m, const Words& w) {
    return m == CacheMode::Cached ? w("cached", "用缓存") : w("uncached", "不用缓存");
}
std::string finish_words(FinishReason r, const Words& w) {
    if (!w.zh()) return finish_reason_name(r);
    switch (r) {
        case FinishReason::None:
            return "仍在生成";
        case FinishReason::EndToken:
            return "遇到结束 token";
        case FinishReason::ContextFull:
            return "上下文已满";
        case FinishReason::LengthLimit:
            return "达到长度上限";
    }
    return "仍在生成";
}
const char* source_words(KvSource s, const Words& w) {
    if (!w.zh()) return kv_source_name(s);
    switch (s) {
        case KvSource::Cached:
            return "来自缓存";
        case KvSource::New:
            return "本步新算";
        case KvSource::Recomputed:
            return "重新计算";
    }
    return "";
}

// The toy's per-token table: one line per row of the step, one column per head of layer 0.
void head_table(std::vector<std::string>& out, const StepRecord& r, const Model& m,
                const std::vector<int>& tokens, const Words& w) {
    const ModelConfig& c = m.config();
    if (r.head_outputs.empty() || r.payload_evicted) return;
    const int rows = static_cast<int>(r.head_outputs.size()) / (c.n_layers * c.n_heads);
    std::string h = "  " + pad_right(w("token", "token"), 12);
    for (int k = 0; k < c.n_heads; ++k)
        h += pad_left(m.is_toy() ? std::to_string(k) + " " + toy_head_name(k)
                                 : w("head ", "头 ") + std::to_string(k),
                      10);
    out.push_back(w("  per-head outputs (layer 0):", "  每个头的输出（第 0 层）："));
    out.push_back(h);
    const int first_pos = r.pos0 + r.tokens_processed - rows;  // rows are the last ones fed
    for (int row = 0; row < rows; ++row) {
        const int pos = first_pos + row;
        const bool known = pos >= 0 && pos < static_cast<int>(tokens.size());
        std::string line = "  " + pad_right(known ? piece_of(m, tokens[pos]) : "?", 12);
        for (int k = 0; k < c.n_heads; ++k)
            line += pad_left(head_value(r, c, 0, k, row, rows, w), 10);
        out.push_back(line);
    }
}

std::string step_line(const StepRecord& r, const Model& m, const Words& w) {
    std::string s = w("step ", "第 ") + std::to_string(r.index) + w(" ", " 步，") +
                    phase_words(r.phase, w) + w(" (", "（") + mode_words(r.mode, w) +
                    w("): ", "）：");
    if (r.phase == Phase::Prefill) {
        const std::string n = std::to_string(r.new_tokens.size());
        const std::string calls = std::to_string(r.forward_calls);
        s += w.zh() ? n + " 个提示词 token，" + calls + " 次前向计算"
                    : n + " prompt tokens in " + calls + " forward pass" +
                          (r.forward_calls > 1 ? "es" : "");
    } else {
        s += w("in ", "输入 ") + quoted_piece(m, r.new_tokens.at(0));
    }
    s += w(" -> out ", " -> 输出 ") + quoted_piece(m, r.token_out);
    if (!r.top.empty() && r.top[0].id == r.token_out) s += fmt(" (p=%.3f)", r.top[0].prob);
    return s;
}

std::string work_line(const StepRecord& r, int kv_before, const Words& w) {
    const int keys = r.pos0 + r.tokens_processed;
    const std::string n = std::to_string(r.tokens_processed);
    std::string s =
        w.zh() ? "  " + n + " 行通过模型"
               : "  " + n + " row" + (r.tokens_processed == 1 ? "" : "s") + " through the model";
    if (r.phase == Phase::Prefill && r.tokens_processed > 1)
        s += w(" (causal mask: the token at position t sees positions 1..t)",
               "（因果掩码：位置 t 的 token 只看得到位置 1..t）");
    else
        s += w.zh() ? "，最后一行查询看 " + std::to_string(keys) + " 个键"
                    : ", last query row over " + std::to_string(keys) + " keys";
    s += w("; KV cache ", "；KV 缓存 ") + std::to_string(kv_before) + " -> " +
         std::to_string(r.kv.len) + w(" rows (", " 行（") +
         format_bytes(static_cast<double>(r.kv.bytes())) + w(")", "）");
    return s;
}

// "412 us (forward passes: median 405 us of 3 runs, 398 us..1.20 ms)": a time and its spread.
std::string measured(const StepRecord& r, const Words& w) {
    std::string s = format_seconds(r.wall_seconds);
    if (r.timing_runs > 1) {
        const std::string runs = std::to_string(r.timing_runs);
        const std::string spread =
            format_seconds(r.forward_min_seconds) + ".." + format_seconds(r.forward_max_seconds);
        s += w.zh() ? "（前向计算：" + runs + " 次运行的中位数 " +
                          format_seconds(r.forward_seconds) + "，范围 " + spread + "）"
                    : " (forward passes: median " + format_seconds(r.forward_seconds) + " of " +
                          runs + " runs, " + spread + ")";
    }
    return s;
}

std::string intensity(const StepRecord& r, const Words& w) {
    return fmt(w("%.3g FLOP per byte", "每字节 %.3g FLOP"),
               r.counts.bytes > 0 ? r.counts.flops / r.counts.bytes : 0.0);
}

std::string cost_line(const StepRecord& r, const Words& w) {
    if (w.zh())
        return "  在" + zh_device(r.device) + "上实测 " + measured(r, w) + "；按形状计数 " +
               format_flops(r.counts.flops) + "（注意力 " + format_flops(r.counts.attention_flops) +
               "），搬运 " + format_bytes(r.counts.bytes) + "，" + intensity(r, w);
    return "  measured " + measured(r, w) + " on " + r.device + "; counted " +
           format_flops(r.counts.flops) + " (attention " + format_flops(r.counts.attention_flops) +
           "), " + format_bytes(r.counts.bytes) + " moved, " + intensity(r, w);
}

std::string twin_line(const StepRecord& r, const StepRecord& u, const Model& m, const Words& w) {
    const std::string diff = fmt("%.3g", max_logit_difference(r, u));
    // Without the causal mask (@cache bidirectional): both sessions recompute everything; this one
    // goes on with the causal session's token, whatever its own most likely one is.
    if (u.mask == AttentionMask::Bidirectional) {
        if (w.zh())
            return "  去掉因果掩码：重算 " + std::to_string(u.tokens_processed) + " 行，实测 " +
                   measured(u, w) + "，计数 " + format_flops(u.counts.flops) + "（注意力 " +
                   format_flops(u.counts.attention_flops) + "）；它自己最可能选 " +
                   quoted_piece(m, u.token_out) +
                   "，接着用的是因果那边选的 token；logit 最大差 |Δ| " + diff;
        return "  without the causal mask: " + std::to_string(u.tokens_processed) +
               " rows recomputed, measured " + measured(u, w) + ", counted " +
               format_flops(u.counts.flops) + " (attention " +
               format_flops(u.counts.attention_flops) + "); its own most likely token " +
               quoted_piece(m, u.token_out) +
               " (it goes on with the causal session's); max |logit difference| " + diff;
    }
    if (w.zh())
        return "  不用缓存：重算 " + std::to_string(u.tokens_processed) + " 行，实测 " +
               measured(u, w) + "，计数 " + format_flops(u.counts.flops) + "（注意力 " +
               format_flops(u.counts.attention_flops) + "）；选了 " + quoted_piece(m, u.token_out) +
               "；logit 最大差 |Δ| " + diff;
    return "  without the cache: " + std::to_string(u.tokens_processed) +
           " rows recomputed, measured " + measured(u, w) + ", counted " +
           format_flops(u.counts.flops) + " (attention " + format_flops(u.counts.attention_flops) +
           "); chose " + quoted_piece(m, u.token_out) + "; max |logit difference| " + diff;
}

// How far the earlier tokens' K/V rows moved at a step that recomputed them, per layer.
std::string delta_line(const StepRecord& r, const Words& w) {
    std::string k, v;
    for (std::size_t l = 0; l < r.kv_delta_k.size(); ++l) {
        if (l > 0) {
            k += ", ";
            v += ", ";
        }
        k += fmt("%.3g", r.kv_delta_k[l]);
        v += fmt("%.3g", r.kv_delta_v[l]);
    }
    return std::string(w(r.mask == AttentionMask::Causal ? "  causal, " : "  bidirectional, ",
                         r.mask == AttentionMask::Causal ? "  因果，" : "  双向，")) +
           w("the earlier K/V rows after one token more, max |ΔK| per layer: ",
             "多一个 token 之后更早的 K/V 行，逐层最大 |ΔK|：") +
           k + w("; max |ΔV|: ", "；最大 |ΔV|：") + v;
}

void describe_steps(std::vector<std::string>& out, const LessonFacts& f, int before,
                    int twin_before, const Words& w) {
    const Session& s = *f.session;
    const Model& m = s.model();
    const auto& steps = s.trace().steps();
    for (std::size_t i = static_cast<std::size_t>(before); i < steps.size(); ++i) {
        const StepRecord& r = steps[i];
        const int kv_before = i == 0 ? 0 : steps[i - 1].kv.len;
        out.push_back(step_line(r, m, w));
        out.push_back(work_line(r, kv_before, w));
        out.push_back(cost_line(r, w));
        const int L = m.config().n_layers;
        if (r.mode == CacheMode::Uncached && r.phase == Phase::Decode)
            for (int l : {0, L - 1})
                if (l == 0 || L > 1)
                    out.push_back(w("  why not Q: ", "  为什么不缓存 Q：") +
                                  why_not_q_words(r, l, L, w.lang));
        if (!r.kv_delta_k.empty()) out.push_back(delta_line(r, w));
        head_table(out, r, m, s.tokens(), w);
        if (!f.uncached) continue;
        const auto& tw = f.uncached->trace().steps();
        const std::size_t j = static_cast<std::size_t>(twin_before) + (i - before);
        if (j >= tw.size()) continue;
        const StepRecord& u = tw[j];
        out.push_back(twin_line(r, u, m, w));
        if (!u.kv_delta_k.empty()) out.push_back(delta_line(u, w));
        if (u.phase == Phase::Decode)
            for (int l : {0, L - 1})
                if (l == 0 || L > 1)
                    out.push_back((u.mask == AttentionMask::Bidirectional
                                       ? w("  without the causal mask, why not Q: ",
                                           "  去掉因果掩码时，为什么不缓存 Q：")
                                       : w("  without the cache, why not Q: ",
                                           "  不用缓存时，为什么不缓存 Q：")) +
                                  why_not_q_words(u, l, L, w.lang));
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
            out.push_back(std::string(label) +
                          fmt(w("%.0f rows through the model, ", "%.0f 行通过模型，"), rows) +
                          w("measured ", "实测 ") + format_seconds(secs) +
                          w(", counted ", "，计数 ") + format_flops(flops));
        };
        const char* uncached_label = w("total so far, uncached: ", "至今合计（不用缓存）：");
        if (f.cache == CacheView::Bidirectional) {
            // Both without the cache: named by their masks.
            totals(w("total so far, causal:        ", "至今合计（因果）：    "), s);
            if (f.uncached)
                totals(w("total so far, bidirectional: ", "至今合计（双向）：    "), *f.uncached);
        } else {
            totals(s.config().mode == CacheMode::Cached
                       ? w("total so far, cached:   ", "至今合计（用缓存）：  ")
                       : uncached_label,
                   s);
            if (f.uncached) totals(uncached_label, *f.uncached);
        }
    }
    if (s.finished())
        out.push_back(w("generation finished: ", "生成结束：") +
                      finish_words(s.finish_reason(), w));
}

void describe_highlight(std::vector<std::string>& out, const LessonFacts& f, const Words& w) {
    const int L = f.highlight_layer, H = f.highlight_head;
    std::string s = w.zh() ? "突出显示第 " + std::to_string(L) + " 层的头 " + std::to_string(H)
                           : "highlight layer " + std::to_string(L) + ", head " + std::to_string(H);
    const ModelConfig& c = f.model->config();
    if (c.n_kv_heads < c.n_heads)
        s += w.zh() ? "（读 K/V 头 " + std::to_string(H / c.kv_mul()) + "）"
                    : " (reads K/V head " + std::to_string(H / c.kv_mul()) + ")";
    out.push_back(s);
    if (!f.session || f.session->trace().empty()) return;
    const StepRecord& r = f.session->trace().back();
    if (r.payload_evicted || r.attention.rows == 0) return;
    const Model& m = *f.model;
    const auto& toks = f.session->tokens();
    const int first = std::max(0, r.attention.rows - 6);  // the last rows are enough to read
    for (int row = first; row < r.attention.rows; ++row) {
        const int qpos = r.attention.q_pos0 + row;
        std::string line = w("  query ", "  查询 ") + quoted_piece(m, toks.at(qpos)) + w(":", "：");
        if (r.attention.is_empty_row(L, H, row)) {
            out.push_back(line + w(" no key to attend to (none)", " 没有可以关注的键（无）"));
            continue;
        }
        const auto weights = r.attention.row(L, H, row);
        const int n = static_cast<int>(weights.size());
        const int from = std::max(0, n - 12);
        if (from > 0) line += " ...";
        for (int k = from; k < n; ++k) {
            line += ' ';
            line += piece_of(m, toks.at(k));
            line += fmt("=%.3f", weights[k]);
        }
        out.push_back(line);
    }
}

std::string floats(const std::vector<float>& v, const Words& w, std::size_t most = 6) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size() && i < most; ++i)
        s +=
            (i ? ", " : "") + (std::isnan(v[i]) ? std::string(w("none", "无")) : fmt("%.4g", v[i]));
    return s + (v.size() > most ? ", ...]" : "]");
}

// @explain: the arithmetic of one attention row of the latest step, a line per key (the last 12).
void describe_explain(std::vector<std::string>& out, const LessonFacts& f, const Directive& d,
                      const Words& w) {
    const Session& s = *f.session;
    const Model& m = s.model();
    const int step = static_cast<int>(s.trace().steps().size()) - 1;
    const int index = d.position < 0 ? -1 : index_of_position(d.position);
    const auto e = explain_query(s.trace(), m.config(), step, d.n, d.head, index, nullptr);
    if (!e) return;
    const auto& toks = s.tokens();
    std::string head = w("head ", "头 ") + std::to_string(e->head);
    if (m.is_toy()) head += std::string(" \"") + toy_head_name(e->head) + "\"";
    const std::string query = quoted_piece(m, toks.at(e->q_pos));
    // The query named by its position, as every front end names it (core/util/numbering.h).
    const std::string pos = std::to_string(position_of_index(e->q_pos));
    if (w.zh())
        out.push_back("注意力内部：第 " + std::to_string(step) + " 步（" +
                      phase_words(e->phase, w) + "），第 " + std::to_string(e->layer) + " 层，" +
                      head + "，位置 " + pos + " 的查询 " + query);
    else
        out.push_back("inside attention: step " + std::to_string(step) + " (" +
                      phase_words(e->phase, w) + "), layer " + std::to_string(e->layer) + ", " +
                      head + ", " + query_row_words(e->q_pos) + " " + query);
    out.push_back("  out = softmax(q.K^T / sqrt(d_k) + mask) . V" + std::string(w(" with ", "，")) +
                  "d_k = " + std::to_string(e->head_dim) + fmt(" (x %.4g)", e->scale) +
                  (e->scores_by_rule
                       ? w("; the toy's scores come from its rule", "；玩具模型的分数来自它的规则")
                       : ""));
    for (int j = std::max(0, e->n_keys - 12); j < e->n_keys; ++j)
        out.push_back(w("  key at ", "  键，位置 ") +
                      pad_left(std::to_string(position_of_index(j)), 3) + " " +
                      pad_right(quoted_piece(m, toks.at(j)), 12) + " " +
                      pad_right(source_words(e->source[j], w), 10) + " q.k " +
                      pad_left(fmt("%.4g", e->raw[j]), 9) + w("  scaled ", "  缩放后 ") +
                      pad_left(fmt("%.4g", e->scaled[j]), 9) +
                      (e->masked[j] ? w("  masked", "  被掩码") : "        ") +
                      w("  weight ", "  权重 ") + fmt("%.4g", e->weights[j]));
    out.push_back(w("  sum of w.v = ", "  w.v 之和 = ") + floats(e->output, w) +
                  w("; the model's output ", "；模型的输出 ") + floats(e->model_output, w) +
                  (e->empty_row ? w(" (no key to attend to)", "（没有可以关注的键）") : ""));
    out.push_back(w("  why not Q: ", "  为什么不缓存 Q：") +
                  why_not_q_words(s.trace().steps().back(), e->layer, m.config().n_layers, w.lang));
}

void describe_whatif(std::vector<std::string>& out, const Model& m, const Words& w) {
    const ModelConfig& c = m.config();
    const std::string layers = std::to_string(c.n_layers), hd = std::to_string(c.head_dim());
    out.push_back(w.zh() ? "每个 token 的 K/V 字节 = 2（K、V）x " + layers + " 层 x K/V 头数 x " +
                               hd + "（头的维度）x 4 字节（float32）"
                         : "K/V bytes per token = 2 (K, V) x " + layers + " layers x kv_heads x " +
                               hd + " head size x 4 bytes (float32)");
    for (const auto& v : kv_what_if(c)) {
        const std::string per = format_bytes(static_cast<double>(v.bytes_per_token));
        const std::string all = format_bytes(static_cast<double>(v.bytes_per_token) * c.seq_len);
        const std::string ctx = std::to_string(c.seq_len);
        if (w.zh())
            out.push_back("  " + v.kind + fmt(" %2.0f 个 K/V 头", v.n_kv_heads) +
                          fmt("，每个配 %2.0f 个查询头：", v.group) + "每 token " + per + "，" +
                          ctx + " 个 token 共 " + all + (v.is_model ? "   <- 本模型" : ""));
        else
            out.push_back("  " + v.kind + fmt(" %2.0f K/V heads", v.n_kv_heads) +
                          fmt(", %2.0f query head", v.group) +
                          (v.group == 1 ? " each:  " : "s each: ") + per + " per token, " + all +
                          " at " + ctx + " tokens" + (v.is_model ? "   <- this model" : ""));
    }
}

void describe_batch(std::vector<std::string>& out, const BatchTable& t, const Words& w) {
    const std::string runs = std::to_string(t.plan.repeats);
    const std::string steps = std::to_string(t.plan.decode_steps);
    out.push_back(w.zh() ? "在" + zh_device(t.device) + "上实测；取 " + runs +
                               " 次运行中最快的一次；解码取 " + steps + " 步的平均"
                         : "measured on " + t.device + "; fastest of " + runs +
                               " runs; decode averaged over " + steps + " steps");
    out.push_back(
        w("  batch | prefill rows   time/step    rows/s | decode rows/step   time/step"
          "    rows/s",
          "  批大小 | 预填充行数   每步时间    行/秒 | 解码每步行数   每步时间    行/秒"));
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

// @serve: the figures serve("...") reads (the CLI's `serve` summary counts the same ServeStats),
// and the block tables when the pool held the most blocks. Requests are numbered from 1 in the
// prompts' order, as `kvscope-cli serve` names them; steps from 0.
void describe_serve(std::vector<std::string>& out, const LessonServe& s, const Words& w) {
    const auto n = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%.0f", v);
        return std::string(b);
    };
    const auto f = [&](const char* field) { return n(serve_field(s, field)); };
    const auto pct = [&](const char* field) {
        char b[32];
        std::snprintf(b, sizeof b, "%.1f%%", serve_field(s, field));
        return std::string(b);
    };
    const bool zh = w.zh();
    out.push_back(zh ? "在" + zh_device(s.device) + "上服务了 " + f("requests") + " 个请求，共 " +
                           f("steps") + " 步，生成 " + f("generated") + " 个 token；每块 " +
                           f("block_size") + " 行，池里 " + f("pool_blocks") + " 块"
                     : "served " + f("requests") + " requests in " + f("steps") + " steps on " +
                           s.device + ", " + f("generated") + " tokens generated; blocks of " +
                           f("block_size") + " rows, a pool of " + f("pool_blocks") + " blocks");
    out.push_back(zh ? "最多同时占用 " + f("peak_blocks") + " 块（最多 " + f("peak_running") +
                           " 个请求同时运行）；若每个请求连续预留整个上下文（" + f("context") +
                           " 行），要 " + f("contiguous_blocks") + " 块：省下 " +
                           f("blocks_saved") + " 块；若按各自提示词加新 token 上限预留，要 " +
                           f("capped_blocks") + " 块"
                     : "peak blocks held: " + f("peak_blocks") + " (at most " + f("peak_running") +
                           " requests at once); a contiguous cache per request (" + f("context") +
                           " rows each) would reserve " + f("contiguous_blocks") +
                           " blocks: " + f("blocks_saved") +
                           " blocks saved; sized to each "
                           "prompt and its new-token cap instead: " +
                           f("capped_blocks") + " blocks");
    out.push_back(zh ? "内部碎片：" + pct("fragmentation") + "（已分配却没用上的槽位，逐步累加）"
                     : "internal fragmentation: " + pct("fragmentation") +
                           " (slots allocated but unused, summed over every step)");
    out.push_back(
        zh ? "前缀缓存：准入时在缓存里找到 " + f("shared_blocks") + " 个满块（" + f("cached_rows") +
                 " 行不再计算；最多有 " + f("most_cached_free") + " 个空闲块仍留在缓存里；" +
                 f("evictions") + " 个缓存块被挪作他用）；提示词共 " + f("prompt_rows") +
                 " 行，预填充计算了 " + f("prefill_rows") + " 行"
           : "prefix blocks shared: " + f("shared_blocks") +
                 " (full blocks found in the prefix cache at admission, " + f("cached_rows") +
                 " rows not computed again; at most " + f("most_cached_free") +
                 " free blocks still cached; " + f("evictions") +
                 " cached blocks taken for other rows); prompt rows: " + f("prompt_rows") +
                 ", prefill rows computed: " + f("prefill_rows"));
    if (serve_field(s, "budget") > 0)
        out.push_back(zh ? "每步 token 预算 " + f("budget") + " 行：有 " + f("chunked_steps") +
                               " 步只算了某个提示词的一段"
                         : "a token budget of " + f("budget") + " rows a step: " +
                               f("chunked_steps") + " steps computed part of a prompt");
    out.push_back(zh ? "排队等待的步数（按原因，逐个请求累加）：没有空位 " + f("waits_places") +
                           "，预算用完 " + f("waits_budget") + "，块不够 " + f("waits_blocks") +
                           "，该步有抢占 " + f("waits_preemption")
                     : "steps waited, summed over requests, by reason: places " +
                           f("waits_places") + ", budget " + f("waits_budget") + ", blocks " +
                           f("waits_blocks") + ", preemption " + f("waits_preemption"));
    {
        char b[200];
        std::snprintf(b, sizeof b, "%.0f", serve_field(s, "tokens_per_second"));
        const std::string batched = b;
        std::snprintf(b, sizeof b, "%.0f", serve_field(s, "alone_tokens_per_second"));
        const std::string alone = b;
        out.push_back(
            zh ? "权重读取（按步计数）：一起服务 " + f("weight_passes") + " 次，逐个服务 " +
                     f("alone_weight_passes") + " 次；测得吞吐：一起服务每秒 " + batched +
                     " 个 token，逐个服务每秒 " + alone + " 个（各取 " + n(s.plan.timing) +
                     " 次运行中最快的一次）"
               : "passes over the weights (counted): " + f("weight_passes") + " together, " +
                     f("alone_weight_passes") + " one request at a time; measured: " + batched +
                     " tokens per second together, " + alone + " one at a time (the fastest of " +
                     n(s.plan.timing) + " runs each)");
    }
    out.push_back(zh ? "一次计算里同时有预填充行和解码行的步：" + f("mixed_steps") +
                           " 步；排过队的请求 " + f("queued") + " 个；抢占 " + f("preemptions") +
                           " 次"
                     : "steps with prefill and decode rows in one pass: " + f("mixed_steps") +
                           "; queued: " + f("queued") +
                           " requests; preempted: " + f("preemptions") + " times");
    out.push_back(zh ? "与各提示词单独服务时文本相同的请求：" + f("same_as_alone") + " 个（共 " +
                           f("requests") + " 个）"
                     : "the same text as each prompt served alone: " + f("same_as_alone") + " of " +
                           f("requests") + " requests");
    if (s.window.passes > 0) {
        char d[32];
        std::snprintf(d, sizeof d, "%.4g", s.window.max_logit_difference);
        out.push_back(zh ? "窗口 " + n(s.plan.window) + " 行、汇点 " + n(s.plan.sinks) +
                               " 行，对比完整缓存：最大 logit 差 " + d + "；" + f("window_passes") +
                               " 次计算中有 " + f("window_same") + " 次最可能的下一个 token 相同"
                         : "window of " + n(s.plan.window) + " rows and " + n(s.plan.sinks) +
                               " sinks against the full cache: max |logit difference| " + d +
                               "; the same most likely next token at " + f("window_same") + " of " +
                               f("window_passes") + " passes");
    }
    if (s.stream.tokens > 0) {
        const auto ppl = [](double v) {
            char b[32];
            std::snprintf(b, sizeof b, "%.2f", v);
            return std::string(b);
        };
        const StreamEffect& e = s.stream;
        out.push_back(
            zh ? "把各请求用完整缓存写出的文本连成一段（" + n(e.tokens) + " 个 token，上下文 " +
                     n(e.context) +
                     "），逐个 token 计算困惑度（上下文内 / 超出上下文）：完整缓存 " +
                     ppl(e.full.within) + " / -；汇点按缓存中的位置编号 " +
                     ppl(e.sinks_cache.within) + " / " + ppl(e.sinks_cache.past) +
                     "；汇点保留原位置 " + ppl(e.sinks_original.within) + " / " +
                     ppl(e.sinks_original.past) + "；没有汇点、窗口 " + n(e.window + e.sinks) +
                     " 行 " + ppl(e.no_sinks.within) + " / " + ppl(e.no_sinks.past)
               : "the requests' full-cache texts joined into one (" + n(e.tokens) +
                     " tokens, context " + n(e.context) +
                     "), one token a pass, perplexity within the context / past it: full cache " +
                     ppl(e.full.within) + " / -; sinks at cache positions " +
                     ppl(e.sinks_cache.within) + " / " + ppl(e.sinks_cache.past) +
                     "; at original positions " + ppl(e.sinks_original.within) + " / " +
                     ppl(e.sinks_original.past) + "; no sinks, a window of " +
                     n(e.window + e.sinks) + " rows " + ppl(e.no_sinks.within) + " / " +
                     ppl(e.no_sinks.past));
    }
    if (s.cache.passes > 0) {
        char d[32];
        std::snprintf(d, sizeof d, "%.4g", s.cache.max_logit_difference);
        const std::string type = s.plan.cache + " (" + s.plan.scales + " scales)";
        const std::string zh_scales = s.plan.scales == "tensor"    ? "每层一个缩放系数"
                                      : s.plan.scales == "channel" ? "K 按通道缩放"
                                                                   : "每行一个缩放系数";
        const std::string zh_type = (s.plan.cache == "int8" ? "8 位整数" : "8 位浮点（e4m3）") +
                                    std::string("，") + zh_scales + "，";
        out.push_back(zh ? zh_type + "对比单精度浮点缓存：一个位置的键和值占 " + f("row_bytes") +
                               " 字节（单精度浮点：" + f("f32_row_bytes") +
                               " 字节）；最大 logit 差 " + d + "；" + f("cache_passes") +
                               " 次计算中有 " + f("cache_same") + " 次最可能的下一个 token 相同"
                         : type + " cache against float32: a position's keys and values take " +
                               f("row_bytes") + " bytes (float32: " + f("f32_row_bytes") +
                               "); max |logit difference| " + d +
                               "; the same most likely next token at " + f("cache_same") + " of " +
                               f("cache_passes") + " passes");
    }
    if (s.run.shown_tables.empty()) return;
    const bool window = s.plan.window > 0;
    out.push_back(zh ? "第 " + n(s.run.shown_step) + " 步之后（" +
                           (window ? "窗口还回的块最多时" : "占用的块最多时") + "）各请求的块表："
                     : "block tables after step " + n(s.run.shown_step) +
                           (window ? " (the most blocks let go):" : " (the most blocks held):"));
    for (const TableSnapshot& t : s.run.shown_tables) {
        std::string blocks;
        for (int b : t.table) {
            // Appended piece by piece: GCC 12 warns (-Wrestrict) about `"..." + s` here, wrongly.
            if (!blocks.empty()) blocks.append(" ");
            blocks.append(b < 0 ? std::string("-") : n(b));
        }
        out.push_back(zh ? "  请求 " + n(t.request + 1) + "：[" + blocks + "]，" + n(t.rows) + " 行"
                         : "  request " + n(t.request + 1) + ": [" + blocks + "], " + n(t.rows) +
                               " rows");
    }
}

void describe_scale(std::vector<std::string>& out, const ScaleReport& r, const Words& w) {
    const ModelConfig& c = r.model.config;
    const ScaleQuery& q = r.query;
    const auto n = [](long long v) { return std::to_string(v); };
    if (w.zh())
        out.push_back(r.model.name + "：dim " + n(c.dim) + "，" + n(c.n_layers) + " 层，" +
                      n(c.n_heads) + " 个头，" + n(c.n_kv_heads) + " 个 K/V 头，hidden " +
                      n(c.hidden_dim) + "，词表 " + n(c.vocab_size) + "（" + r.model.source + "）");
    else
        out.push_back(r.model.name + ": dim " + n(c.dim) + ", " + n(c.n_layers) + " layers, " +
                      n(c.n_heads) + " heads, " + n(c.n_kv_heads) + " K/V heads, hidden " +
                      n(c.hidden_dim) + ", vocab " + n(c.vocab_size) + " (" + r.model.source + ")");
    out.push_back(r.gpu.name + w(": ", "：") + format_si(r.gpu.peak_flops) +
                  w("FLOP/s dense 16-bit, ", "FLOP/s（16 位稠密），") + format_si(r.gpu.bandwidth) +
                  w("B/s, ", "B/s，") + format_si(r.gpu.memory) + w("B (", "B（") + r.gpu.source +
                  w(")", "）"));
    const std::string bpv = n(q.bytes_per_value);
    out.push_back(w.zh() ? "上下文 " + n(q.context) + " 个 token，批大小 " + n(q.batch) +
                               "，每个数值 " + bpv + " 字节"
                         : "context " + n(q.context) + " tokens, batch " + n(q.batch) + ", " + bpv +
                               " bytes per value");
    out.push_back(w("weights: ", "权重：") + format_si(r.params) +
                  w(" parameters x ", " 个参数 x ") + bpv + " B = " + format_si(r.weight_bytes) +
                  "B");
    out.push_back(
        w("KV cache: 2 x ", "KV 缓存：2 x ") + n(c.n_layers) + " x " + n(c.n_kv_heads) + " x " +
        n(c.head_dim()) + " x " + bpv + " B = " + format_bytes(r.kv_bytes_per_token) +
        w(" per token; x ", " 每 token；x ") + n(q.context) + w(" tokens x ", " 个 token x ") +
        n(q.batch) + " = " + format_si(r.kv_bytes) + "B");
    const std::string total = format_si(r.weight_bytes + r.kv_bytes) + "B";
    const std::string mem = format_si(r.gpu.memory) + "B";
    out.push_back(w.zh()
                      ? "显存：权重 + KV = " + total + "，" + (r.fits ? "放得进 " : "放不进 ") + mem
                      : "memory: weights + KV = " + total + ", " +
                            (r.fits ? "fits" : "does NOT fit") + " in " + mem);
    out.push_back(w("ridge point: ", "拐点：") + format_si(r.gpu.peak_flops) + "FLOP/s / " +
                  format_si(r.gpu.bandwidth) +
                  "B/s = " + fmt(w("%.0f FLOP per byte", "每字节 %.0f FLOP"), r.ridge));
    auto phase = [&](const char* name, const PhaseCost& p) {
        const std::string att = fmt("%.1f%%", 100 * p.attention_flops / p.flops);
        const std::string ai = fmt("%.1f", p.intensity);
        if (w.zh())
            out.push_back(std::string(name) + "：" + format_si(p.flops) + "FLOP（注意力 " + att +
                          "），搬运 " + format_si(p.bytes) + "B，强度 " + ai +
                          " FLOP/B -> 算力需 " + format_seconds(p.compute_seconds) + "，访存需 " +
                          format_seconds(p.memory_seconds) + "：" +
                          (p.memory_bound ? "受带宽限制" : "受算力限制") + "，至少 " +
                          format_seconds(p.seconds()));
        else
            out.push_back(std::string(name) + ": " + format_si(p.flops) + "FLOP (attention " + att +
                          "), " + format_si(p.bytes) + "B moved, intensity " + ai +
                          " FLOP/B -> compute " + format_seconds(p.compute_seconds) + ", memory " +
                          format_seconds(p.memory_seconds) + ": " +
                          (p.memory_bound ? "memory-bound" : "compute-bound") + ", at least " +
                          format_seconds(p.seconds()));
    };
    phase(w("prefill (all prompts, one pass)", "预填充（所有提示词，一次前向）"), r.prefill);
    phase(w("decode step (one token per sequence)", "解码一步（每条序列一个 token）"), r.decode);
    out.push_back(
        w("FLOPs = 2 x rows x weights (linear layers) + 4 x dim x keys x layers "
          "(attention) + small ops; bytes = weights once + K/V rows read + written "
          "(core/model/counts.h)",
          "FLOPs = 2 x 行数 x 权重数（线性层）+ 4 x dim x 键数 x 层数（注意力）+ "
          "零碎运算；字节 = 权重读一遍 + 读写的 K/V 行（core/model/counts.h）"));
}

// @gpu: what was counted (on the emulated backend) and what was measured, each said so.
void describe_gpu(std::vector<std::string>& out, const GpuStepView& g, const Words& w) {
    const auto n = [](int v) { return std::to_string(v); };
    out.push_back(
        w("counted on the emulated CUDA backend (the cuda backend's runtime calls, one "
          "for one):",
          "在模拟的 CUDA 后端上计数（与 cuda 后端的运行时调用一一对应）："));
    const std::string per_row =
        fmt("%.3g", double(g.prefill_launches) / std::max(1, g.prefill_rows));
    out.push_back(w.zh()
                      ? "  预填充 " + n(g.prefill_rows) + " 个 token：" + n(g.prefill_launches) +
                            " 次内核启动（每个 token 合 " + per_row + " 次）"
                      : "  prefill of " + n(g.prefill_rows) + " tokens: " + n(g.prefill_launches) +
                            " kernel launches (" + per_row + " per token)");
    out.push_back(
        w.zh() ? "  一个解码步，逐个算子：" + n(g.decode_launches) + " 次内核启动，" +
                     n(g.decode_copies) + " 次主机与设备间拷贝，" + n(g.decode_syncs) + " 次流同步"
               : "  a decode step, op by op: " + n(g.decode_launches) + " kernel launches, " +
                     n(g.decode_copies) + " host-device copies, " + n(g.decode_syncs) +
                     " stream sync" + (g.decode_syncs == 1 ? "" : "s"));
    if (g.graph_launches > 0)
        out.push_back(w.zh() ? "  同一步录成 CUDA Graph：" + n(g.graph_launches) +
                                   " 次图启动，其中运行 " + n(g.graph_kernels) + " 个内核"
                             : "  the same step as a CUDA Graph: " + n(g.graph_launches) +
                                   " graph launch running " + n(g.graph_kernels) + " kernels");
    if (g.fused_kernels > 0)
        out.push_back(w.zh() ? "  同一步用融合内核（快速路径）：" + n(g.fused_kernels) + " 个内核"
                             : "  the same step fused (the fast path): " + n(g.fused_kernels) +
                                   " kernels");
    const std::string steps = n(g.steps);
    out.push_back(w.zh() ? "实测（" + steps + " 个解码步的中位数）：" + zh_device(g.cpu) +
                               "上每步 " + format_seconds(g.cpu_seconds)
                         : "measured (median of " + steps + " decode steps): " +
                               format_seconds(g.cpu_seconds) + " per step on " + g.cpu);
    if (g.device.empty())
        out.push_back(w("  GPU: not measured (", "  GPU：没有实测（") +
                      engine_message(g.no_device, w.lang) + w(")", "）"));
    else
        out.push_back(w.zh()
                          ? "  " + g.device + "：逐个算子每步 " + format_seconds(g.device_seconds) +
                                "，作为一个图每步 " + format_seconds(g.graph_seconds) +
                                "，融合后每步 " + format_seconds(g.fused_seconds)
                          : "  " + g.device + ": " + format_seconds(g.device_seconds) +
                                " per step op by op, " + format_seconds(g.graph_seconds) +
                                " as one graph, " + format_seconds(g.fused_seconds) + " fused");
}

}  // namespace

// core's why_not_q_line in the report's language (the same counts, read from the step).
std::string why_not_q_words(const StepRecord& r, int layer, int n_layers, ReportLang lang) {
    const Words w{lang};
    if (!w.zh()) return why_not_q_line(r, layer, n_layers);
    std::string s;
    const auto use = query_row_use(r, n_layers);
    if (layer >= 0 && layer < static_cast<int>(use.size())) {
        const QueryRowUse& u = use[layer];
        const std::string next = "第 " + std::to_string(u.layer + 1) + " 层的 K/V 行";
        s = "第 " + std::to_string(u.layer) + " 层：算了 " + std::to_string(u.computed) +
            " 行查询：" + std::to_string(u.for_output) + " 行用于这个 token 的输出";
        if (u.build_next_kv > 0)
            s += "，" + std::to_string(u.build_next_kv) + " 行用来构建" + next + "（存进缓存）";
        if (u.rebuild_next_kv > 0)
            s += "，" + std::to_string(u.rebuild_next_kv) + " 行只为重建" + next +
                 (u.rebuilt_changed ? "（没有因果掩码：每一行都变了，缓存留不住）"
                                    : "（上一步也算过它们）");
        if (u.thrown_away > 0)
            s += "，" + std::to_string(u.thrown_away) + " 行被丢弃（最后一层：没有谁读它们的输出）";
        if (u.computed == u.for_output) s += "；用不到任何更早 token 的查询";
        s += "；";
    }
    if (r.kv_rows_recomputed == 0) {
        const int read = r.kv.len - r.kv_rows_written;
        if (read > 0) s += "从缓存读了 " + std::to_string(read) + " 行 K/V，";
        return s + "新写入 " + std::to_string(r.kv_rows_written) + " 行 K/V";
    }
    s += "上一步算过的 " + std::to_string(r.kv_rows_recomputed) + " 行 K/V 又算了一遍，";
    const double d = kv_recomputed_delta(r, layer);
    if (d < 0)
        s += "没有比较（记录里没留 K/V 行）";
    else if (d == 0)
        s += "与上一步的完全相同（最大 |Δ| = 0）";
    else
        s += fmt("与上一步的最多相差 |Δ| = %.3g", d);
    return s + "，并新写入 " + std::to_string(r.kv_rows_written - r.kv_rows_recomputed) + " 行 K/V";
}

std::vector<std::string> describe_action(const Directive& d, const LessonFacts& f, int steps_before,
                                         int twin_steps_before, ReportLang lang) {
    const Words w{lang};
    std::vector<std::string> out;
    switch (d.kind) {
        case DirectiveKind::Model: {
            if (!f.model) break;
            const Model& m = *f.model;
            const ModelConfig& c = m.config();
            out.push_back(w("model ", "模型 ") + m.name() + w(": ", "：") + c.describe());
            std::string line =
                fmt(w("%.0f parameters", "%.0f 个参数"), static_cast<double>(m.parameter_count()));
            for (const auto& v : kv_what_if(c))
                if (v.is_model && v.kind != "MHA")
                    line += w.zh() ? "；每个 K/V 头由 " + std::to_string(v.group) +
                                         " 个查询头共用（" + v.kind + "）"
                                   : "; " + std::to_string(v.group) +
                                         " query heads share each K/V head (" + v.kind + ")";
            out.push_back(line);
            break;
        }
        case DirectiveKind::Prompt: {
            if (!f.session) break;
            const Session& s = *f.session;
            std::string line = w.zh() ? "提示词：" + std::to_string(s.prompt_len()) + " 个 token："
                                      : "prompt: " + std::to_string(s.prompt_len()) + " tokens:";
            for (int i = 0; i < s.prompt_len(); ++i)
                line += " [" + piece_of(s.model(), s.tokens()[i]) + "]";
            out.push_back(line);
            break;
        }
        case DirectiveKind::Limit:
            out.push_back(w.zh() ? "最多生成 " + std::to_string(d.n) + " 个新 token"
                                 : "at most " + std::to_string(d.n) + " new tokens");
            break;
        case DirectiveKind::Cache:
            out.push_back(d.cache == CacheView::On
                              ? w("KV cache on: a decode step feeds one token and reads the cache",
                                  "KV 缓存打开：每个解码步只送入一个 token，其余从缓存读")
                          : d.cache == CacheView::Off
                              ? w("KV cache off: a decode step recomputes the whole sequence",
                                  "KV 缓存关闭：每个解码步把整个序列重算一遍")
                          : d.cache == CacheView::Compare
                              ? w("compare: a twin session takes the same steps without the cache",
                                  "对比：另一个会话不用缓存，走同样的每一步")
                              : w("bidirectional: the same model without the causal mask beside "
                                  "it, both recomputing every token; each step measures how far "
                                  "the earlier tokens' K/V rows moved, per layer",
                                  "双向：同一个模型去掉因果掩码，放在旁边对比，两者每步都重算所有 "
                                  "token；每一步都逐层测出更早 token 的 K/V 行变了多少"));
            break;
        case DirectiveKind::Prefill:
        case DirectiveKind::Decode:
            if (!f.session) break;
            describe_steps(out, f, steps_before, twin_steps_before, w);
            if (d.kind == DirectiveKind::Decode &&
                f.session->trace().steps().size() == static_cast<std::size_t>(steps_before))
                out.push_back(
                    w("no step taken: generation had finished (", "没有走这一步：生成已经结束（") +
                    finish_words(f.session->finish_reason(), w) + w(")", "）"));
            break;
        case DirectiveKind::Reset:
            out.push_back(w("back to the prompt: cache emptied, trace cleared",
                            "回到提示词：缓存清空，记录清除"));
            break;
        case DirectiveKind::Highlight:
            if (f.model) describe_highlight(out, f, w);
            break;
        case DirectiveKind::Explain:
            if (f.session) describe_explain(out, f, d, w);
            break;
        case DirectiveKind::Show:
            out.push_back(w("panel: ", "面板：") + d.arg);
            break;
        case DirectiveKind::WhatIf:
            if (f.model) describe_whatif(out, *f.model, w);
            break;
        case DirectiveKind::Batch:
            if (f.batch) describe_batch(out, *f.batch, w);
            break;
        case DirectiveKind::Scale:
            if (f.scale) describe_scale(out, *f.scale, w);
            break;
        case DirectiveKind::Gpu:
            if (f.gpu) describe_gpu(out, *f.gpu, w);
            break;
        case DirectiveKind::Serve:
            if (f.serve) describe_serve(out, *f.serve, w);
            break;
        case DirectiveKind::Ask:
        case DirectiveKind::Expect:
            break;
    }
    return out;
}

}  // namespace kvs
