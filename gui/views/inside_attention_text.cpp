#include "gui/views/inside_attention_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/state/strings.h"
#include "lessonlib/attention_row_words.h"

namespace kvs::gui {

std::string fmt_number(float v) {
    if (std::isinf(v)) return v < 0 ? "−∞" : "+∞";  // the window's glyphs; the rest as everywhere
    if (std::isnan(v)) return "NaN";                // also a kv delta's, not only a row's "none"
    return attention_number(v);
}

std::string fmt_vector(std::span<const float> v, int max_items) {
    const int n = static_cast<int>(v.size());
    const int head = n > max_items ? (max_items + 1) / 2 : n;
    const int tail = n > max_items ? max_items - head : 0;
    std::string s = "[";
    for (int i = 0; i < head; ++i) s += (i ? ", " : "") + fmt_number(v[i]);
    if (tail > 0) s += ", …";
    for (int i = n - tail; i < n; ++i) s += ", " + fmt_number(v[i]);
    return s + "]";
}

namespace {

std::string printf_string(const char* fmt, auto... args) {
    char b[512];
    std::snprintf(b, sizeof b, fmt, args...);
    return b;
}

int d_v(const AttentionExplain& e) {
    return e.n_keys > 0 ? static_cast<int>(e.v.size()) / e.n_keys : 0;
}

}  // namespace

ExplainLines explain_lines(const AttentionExplain& e) {
    ExplainLines L;
    const std::string out = e.empty_row ? tr("none") : fmt_vector(e.output, 6);
    L.number_parts = {
        "= softmax(" + fmt_vector(e.raw, 6) + " × " + fmt_number(e.scale) + " + mask)·V",
        "= " + fmt_vector(e.weights, 6) + "·V", "= " + out};
    for (const auto& p : L.number_parts) L.numbers += (L.numbers.empty() ? "" : " ") + p;
    const int T = e.n_keys, dk = e.head_dim, dv = d_v(e);
    if (e.query_rows_computed <= 1)
        L.scores = printf_string(tr("q [1, %d] · Kᵀ [%d, %d] → scores [1, %d]"), dk, dk, T, T);
    else
        L.scores = printf_string(tr("Q [%d, %d] · Kᵀ [%d, %d] → scores [%d, %d]; shown: %s"),
                                 e.query_rows_computed, dk, dk, T, e.query_rows_computed, T,
                                 query_row_label(e.q_pos).c_str());
    L.output = printf_string(tr("weights [1, %d] · V [%d, %d] → output [1, %d]"), T, T, dv, dv);
    if (e.heads_sharing_kv.size() > 1) {
        std::string heads;
        for (int h : e.heads_sharing_kv) heads += (heads.empty() ? "" : ", ") + std::to_string(h);
        L.gqa = printf_string(tr("grouped-query attention: K/V head %d is read by query heads %s"),
                              e.kv_head, heads.c_str());
    }
    if (e.scores_by_rule)
        L.scale = tr("scores by the head's rule: 0 where it selects the key, −∞ where not");
    else
        L.scale =
            printf_string(tr("×1/√d_k = 1/√%d = %s"), e.head_dim, fmt_number(e.scale).c_str());
    return L;
}

std::vector<std::string> explain_number_parts(const AttentionExplain& e, int stage) {
    if (stage < 0 || stage > 6) return explain_lines(e).number_parts;
    std::vector<std::string> parts;
    if (stage >= 1) parts.push_back("q·Kᵀ = " + fmt_vector(e.raw, 6));
    if (stage >= 2) parts.push_back("× " + fmt_number(e.scale) + " = " + fmt_vector(e.scaled, 6));
    if (stage >= 3) {
        std::vector<float> masked = e.scaled;
        for (std::size_t j = 0; j < masked.size() && j < e.masked.size(); ++j)
            if (e.masked[j]) masked[j] = -INFINITY;
        parts.push_back("+ mask = " + fmt_vector(masked, 6));
    }
    if (stage >= 4) parts.push_back("softmax → " + fmt_vector(e.weights, 6));
    if (stage >= 5) parts.push_back("·V");
    if (stage >= 6)
        parts.push_back("= " + (e.empty_row ? std::string(tr("none")) : fmt_vector(e.output, 6)));
    return parts;
}

std::string explain_stage_note(const AttentionExplain& e, int stage) {
    if (stage != 3 || std::find(e.masked.begin(), e.masked.end(), 1) != e.masked.end()) return {};
    if (e.mask == AttentionMask::Bidirectional)
        return tr("nothing to mask: this session runs without the causal mask, every key is seen");
    return tr("nothing to mask: the query is the newest token, every key comes before it");
}

const char* explain_stage_name(int stage) {
    static const char* names[] = {tr_later("q and the K rows"),
                                  tr_later("the scores q·k_j"),
                                  tr_later("scaled by 1/√d_k"),
                                  tr_later("the causal mask"),
                                  tr_later("softmax: the weights"),
                                  tr_later("the weights times V"),
                                  tr_later("the output")};
    return stage >= 0 && stage < 7 ? names[stage] : "";
}

std::string explain_stage_shape(const AttentionExplain& e, int stage) {
    const int T = e.n_keys, dk = e.head_dim, dv = d_v(e);
    // Rows of Q the step computed: 1 at a cached decode step, every token otherwise.
    const int R = std::max(e.query_rows_computed, 1);
    auto sh = [](int a, int b) { return printf_string("[%d, %d]", a, b); };
    switch (stage) {
        case 0:
            return "q " + sh(R, dk) + ", K " + sh(T, dk);
        case 1:
            return sh(R, dk) + " · " + sh(dk, T) + " → " + sh(R, T);
        case 2:
            return sh(R, T) + " × " + fmt_number(e.scale) + " → " + sh(R, T);
        case 3:
            return sh(R, T) + " + " + sh(R, T) +
                   (R > 1 && e.mask == AttentionMask::Causal
                        ? std::string(" ") + tr("(−∞ above the diagonal)")
                        : std::string());
        case 4:
            return "softmax " + sh(R, T) + " → " + sh(R, T) + " (Σ = 1)";
        case 5:
            return sh(R, T) + " · V " + sh(T, dv) + " → " + sh(R, dv);
        case 6:
            return sh(1, dv);
        default:
            return "";
    }
}

std::vector<ExplainColumn> explain_columns(const AttentionExplain& e) {
    const int T = e.n_keys, dk = e.head_dim, dv = d_v(e);
    auto shape = [](int a, int b) { return printf_string("[%d, %d]", a, b); };
    // The query rows the step computed: one at a cached decode step, every token otherwise.
    return {
        {"q", shape(std::max(e.query_rows_computed, 1), dk)},
        {"K", shape(T, dk)},
        {"q·k_j", shape(1, T)},
        {printf_string("×1/√%d", dk), shape(1, T)},
        {tr("+ mask"), shape(1, T)},
        {tr("softmax w"), shape(1, T)},
        {"V", shape(T, dv)},
        {"Σ_j w_j·v_j", shape(1, dv)},
    };
}

const char* projection_stage_name(int p) {
    static const char* names[] = {tr_later("the layer's input x"),
                                  tr_later("the norm: x → x_norm"),
                                  tr_later("x_norm · W_q → q"),
                                  tr_later("x_norm · W_k → k"),
                                  tr_later("x_norm · W_v → v"),
                                  tr_later("RoPE turns q and k"),
                                  tr_later("K and V written to the cache")};
    return p >= 0 && p < kProjectionStages ? names[p] : "";
}

std::string projection_stage_shape(const ProjectionExplain& pe, int p) {
    auto sh = [](int a, int b) { return printf_string("[%d, %d]", a, b); };
    const int d = pe.dim, hd = pe.head_dim;
    switch (p) {
        case 0:
            return "x " + sh(1, d);
        case 1:
            return sh(1, d) + " → " + sh(1, d);
        case 2:
        case 3:
        case 4:
            return sh(1, d) + " · " + sh(d, hd) + " → " + sh(1, hd);
        case 5:
            return sh(1, hd) + " → " + sh(1, hd);
        case 6:
            return "K, V " + sh(1, hd) + " → " + tr("cache row") + " " +
                   std::to_string(pe.cache_row + 1);
        default:
            return "";
    }
}

std::string projection_numbers(const char* name, const std::vector<float>& v, int max_items) {
    return std::string(name) + " = " + fmt_vector(v, max_items);
}

}  // namespace kvs::gui
