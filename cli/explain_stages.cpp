#include "cli/explain_stages.h"

#include <cmath>
#include <cstdio>

#include "core/model/weight_strip.h"
#include "core/session/trace_json.h"
#include "core/util/numbering.h"
#include "core/util/utf8.h"
#include "lessonlib/attention_row_words.h"

namespace kvs::cli {

namespace {

// The first values of a long row, then how many there are.
std::string head_of(const std::vector<float>& v) {
    const std::size_t shown = 8;
    if (v.size() <= shown) return attention_numbers(v.data(), v.size());
    std::string s = attention_numbers(v.data(), shown);
    s.pop_back();
    return s + ", ... (" + std::to_string(v.size()) + " values)]";
}

std::string num(double x) {
    return attention_number(static_cast<float>(x));
}

std::string run_words(const RowRun& r) {
    if (r.count == 0) return "none";
    if (r.count == 1) return "position " + std::to_string(position_of_index(r.first));
    return "positions " + std::to_string(position_of_index(r.first)) + "-" +
           std::to_string(position_of_index(r.first + r.count - 1));
}

const char* matrix_name(MatrixKind k) {
    return k == MatrixKind::wq ? "W_q" : k == MatrixKind::wk ? "W_k" : "W_v";
}

}  // namespace

void print_projection_text(const ProjectionExplain& p, const Model& m,
                           const std::vector<int>& seq) {
    const std::string piece = escape_for_one_line(m.tokenizer().piece(seq.at(p.q_pos)));
    std::printf(
        "explain: %s, step %d (%s, %s), layer %d, head %d (K/V head %d), %s \"%s\": where q, k "
        "and v come from\n",
        escape_for_one_line(m.name()).c_str(), p.step, phase_name(p.phase), mode_name(p.mode),
        p.layer, p.head, p.kv_head, query_row_words(p.q_pos).c_str(), piece.c_str());
    std::printf("  x, the layer's input [%d]: mean %s, rms %s = %s\n", p.dim, num(p.x_mean).c_str(),
                num(p.x_rms).c_str(), head_of(p.x).c_str());
    std::printf("  x_norm = %s(x) [%d] = %s\n", p.layer_norm ? "LayerNorm" : "RMSNorm", p.dim,
                head_of(p.x_norm).c_str());
    const char* bias = p.bias ? " + b" : "";
    const int hd = p.head_dim;
    std::printf("  q = x_norm . W_q^T%s, W_q rows %d-%d: [%d] . [%d, %d] -> [%d] = %s  |q| = %s\n",
                bias, p.wq_first, p.wq_first + hd - 1, p.dim, hd, p.dim, hd,
                attention_numbers(p.q.data(), p.q.size()).c_str(), num(p.q_len).c_str());
    std::printf("  k = x_norm . W_k^T%s, W_k rows %d-%d: [%d] -> [%d] = %s  |k| = %s\n", bias,
                p.wk_first, p.wk_first + hd - 1, p.dim, hd,
                attention_numbers(p.k.data(), p.k.size()).c_str(), num(p.k_len).c_str());
    std::printf("  v = x_norm . W_v^T%s, W_v rows %d-%d: [%d] -> [%d] = %s\n", bias, p.wk_first,
                p.wk_first + hd - 1, p.dim, hd, attention_numbers(p.v.data(), p.v.size()).c_str());
    if (p.rope) {
        std::printf(
            "  RoPE at position %d turns each pair (2i, 2i+1) by an angle growing with it:\n",
            position_of_index(p.q_pos));
        std::printf("    q -> %s  |q| = %s\n",
                    attention_numbers(p.q_rope.data(), p.q_rope.size()).c_str(),
                    num(p.q_rope_len).c_str());
        std::printf("    k -> %s  |k| = %s\n",
                    attention_numbers(p.k_rope.data(), p.k_rope.size()).c_str(),
                    num(p.k_rope_len).c_str());
        std::printf("    each pair's turn (radians, measured): %s\n",
                    attention_numbers(p.q_angle.data(), p.q_angle.size()).c_str());
    } else {
        std::printf(
            "  no RoPE: the learned positions were added to x; q and k are used as they are\n");
    }
    std::printf(
        "  the cache: this token's K and V rows are written as row %d of layer %d's cache (%s); "
        "the query reads %d keys, its own and %d cached, %d new, %d recomputed\n",
        position_of_index(p.cache_row), p.layer, kv_source_name(p.own), p.keys_read, p.read_cached,
        p.read_new, p.read_recomputed);
    std::printf("%s\n", kNumberingWords);
}

void print_map_text(const StepMap& map, const std::vector<int>& seq, const Model& m) {
    std::printf(
        "explain: %s, step %d (%s, ran %s, %s mask): the cache held %d rows; %s joined (\"%s\"), "
        "%d rows after\n",
        escape_for_one_line(m.name()).c_str(), map.step, phase_name(map.phase), mode_name(map.mode),
        mask_name(map.mask), map.held_before, run_words(map.joined).c_str(),
        escape_for_one_line(m.tokenizer().piece(seq.at(map.len - 1))).c_str(), map.len);
    std::printf("  %5s | %-70s | %s\n", "layer", "with the cache", "without the cache");
    for (const LayerMap& l : map.layers) {
        char with[160] = "not possible without the causal mask";
        if (l.cached.possible)
            std::snprintf(with, sizeof with, "q %s (%d needed), K/V read %s, written %s",
                          run_words(l.cached.queries).c_str(), l.cached.queries_needed,
                          run_words(l.cached.kv_read).c_str(),
                          run_words(l.cached.kv_written).c_str());
        std::string without = "q " + run_words(l.uncached.queries) + " (" +
                              std::to_string(l.uncached.queries_needed) +
                              " needed), K/V recomputed " + run_words(l.uncached.kv_recomputed) +
                              ", written " + run_words(l.uncached.kv_written);
        if (l.uncached.kv_delta >= 0)
            without +=
                ", recomputed rows differ from the held by at most " + num(l.uncached.kv_delta);
        std::printf("  %5d | %-70s | %s\n", l.layer, with, without.c_str());
    }
    std::printf(
        "  needed: the query rows whose output something reads (the next token, or the next "
        "layer's K/V rows); the last layer needs only the newest\n");
    std::printf("%s\n", kNumberingWords);
}

void print_sampling_text(const StepRecord& r, const Model& m) {
    const SamplingStages& s = r.sampling;
    const Tokenizer& tok = m.tokenizer();
    std::printf("explain: %s, step %d: the next token, stage by stage\n",
                escape_for_one_line(m.name()).c_str(), r.index);
    if (s.greedy) {
        std::printf("  temperature 0: the largest logit is taken (greedy), no draw\n");
    } else {
        std::printf(
            "  logits -> / temperature %s -> softmax -> top-k %d (kept %d) -> top-p %s (kept %d, "
            "mass %s) -> renormalised -> a coin %s walks the cumulative mass by %s\n",
            num(s.temperature).c_str(), s.top_k, s.kept_top_k, num(s.top_p).c_str(), s.kept_top_p,
            num(s.nucleus_mass).c_str(), s.coin >= 0 ? num(s.coin).c_str() : "(none)",
            s.draw_by_id ? "token id" : "probability, best first");
    }
    std::printf("  %6s %-14s %9s %9s %9s %9s %9s %9s %9s\n", "id", "token", "logit", "logit/T",
                "p (T=1)", "p at T", "top-k", "final", "cdf from");
    for (const SamplingEntry& e : s.entries) {
        std::string piece(1, '"');
        piece.append(escape_for_one_line(tok.piece(e.id))).push_back('"');
        std::printf("  %6d %-14s %9s %9s %9s %9s %9s %9s %9s%s\n", e.id, piece.c_str(),
                    attention_number(e.logit).c_str(), attention_number(e.scaled_logit).c_str(),
                    attention_number(e.p).c_str(), attention_number(e.p_tempered).c_str(),
                    attention_number(e.p_top_k).c_str(), attention_number(e.p_final).c_str(),
                    e.p_final > 0 ? attention_number(e.cdf_from).c_str() : "",
                    e.id == s.drawn ? "  <- drawn" : "");
    }
    std::printf("  %6s %-14s %9s %9s %9s %9s %9s %9s\n", "", "(the rest)", "", "",
                attention_number(s.rest_p).c_str(), attention_number(s.rest_tempered).c_str(),
                attention_number(s.rest_top_k).c_str(), attention_number(s.rest_final).c_str());
    if (s.forced) std::printf("  the session took its twin's token instead of its own draw\n");
}

void write_projection_json(JsonWriter& j, const std::optional<ProjectionExplain>& p,
                           const std::string& why, const Model& m) {
    if (!p) {
        j.key("projection").null();
        j.field("projection_missing", why);
        return;
    }
    j.key("projection").begin_object();
    j.field("layer", p->layer).field("head", p->head).field("kv_head", p->kv_head);
    j.field("position", position_of_index(p->q_pos)).field("q_pos", p->q_pos);
    j.field("dim", p->dim).field("head_dim", p->head_dim);
    j.field("norm", p->layer_norm ? "LayerNorm" : "RMSNorm").field("rope", p->rope);
    j.field("bias", p->bias);
    j.key("x").floats(p->x);
    j.field("x_mean", p->x_mean).field("x_rms", p->x_rms);
    j.key("x_norm").floats(p->x_norm);
    j.field("wq_first_row", p->wq_first).field("wk_first_row", p->wk_first);
    j.key("q").floats(p->q);
    j.key("k").floats(p->k);
    j.key("v").floats(p->v);
    j.key("q_rope").floats(p->q_rope);
    j.key("k_rope").floats(p->k_rope);
    j.field("q_len", p->q_len).field("q_rope_len", p->q_rope_len);
    j.field("k_len", p->k_len).field("k_rope_len", p->k_rope_len);
    j.key("q_angle").floats(p->q_angle);
    j.key("k_angle").floats(p->k_angle);
    j.key("cache").begin_object();
    j.field("row_position", position_of_index(p->cache_row));
    j.field("written_as", kv_source_name(p->own));
    j.field("keys_read", p->keys_read).field("read_cached", p->read_cached);
    j.field("read_new", p->read_new).field("read_recomputed", p->read_recomputed);
    j.end_object();
    j.end_object();
    // The weights behind the head's numbers, as heat strips (a replay's model keeps none).
    j.key("weights").begin_array();
    for (MatrixKind k : {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv}) {
        std::string no;
        const auto s = weight_strip(m, k, p->layer, p->head, kStripColumns, &no);
        if (!s) continue;
        j.begin_object();
        j.field("matrix", matrix_name(k)).field("first_row", s->first_row).field("rows", s->rows);
        j.field("row_len", s->row_len).field("cols", s->cols).field("block", s->block);
        j.field("abs_max", static_cast<double>(s->abs_max));
        j.key("cells").floats(s->cells);
        j.end_object();
    }
    j.end_array();
}

void write_map_json(JsonWriter& j, const StepMap& map) {
    const auto run = [&](const char* name, const RowRun& r) {
        j.key(name).begin_object();
        j.field("first_position", position_of_index(r.first)).field("count", r.count);
        j.end_object();
    };
    const auto way = [&](const char* name, const LayerWay& w) {
        j.key(name).begin_object();
        j.field("possible", w.possible);
        run("queries", w.queries);
        j.field("queries_needed", w.queries_needed);
        j.field("for_output", w.use.for_output).field("build_next_kv", w.use.build_next_kv);
        j.field("rebuild_next_kv", w.use.rebuild_next_kv).field("thrown_away", w.use.thrown_away);
        run("kv_read", w.kv_read);
        run("kv_recomputed", w.kv_recomputed);
        run("kv_written", w.kv_written);
        if (w.kv_delta >= 0)
            j.field("kv_delta", w.kv_delta);
        else
            j.key("kv_delta").null();
        j.end_object();
    };
    j.key("map").begin_object();
    j.field("ran", mode_name(map.mode)).field("mask", mask_name(map.mask));
    j.field("held_before", map.held_before).field("len", map.len);
    run("joined", map.joined);
    j.key("layers").begin_array();
    for (const LayerMap& l : map.layers) {
        j.begin_object();
        j.field("layer", l.layer);
        way("cached", l.cached);
        way("uncached", l.uncached);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

void write_sampling_json(JsonWriter& j, const StepRecord& r, const Model& m) {
    if (r.sampling.vocab > 0)
        kvs::write_sampling_json(j, r.sampling, m.tokenizer());
    else
        j.key("sampling").null();
}

}  // namespace kvs::cli
