#include "lessonlib/why_not_q_words.h"

#include <cstdio>
#include <vector>

namespace kvs {
namespace {

// "7 query rows", "1 query row"; 7 行查询.
std::string rows(int n, const char* en_what, const char* zh_what, const Words& w) {
    if (w.zh()) return std::to_string(n) + " 行" + zh_what;
    return std::to_string(n) + " " + en_what + (n == 1 ? " row" : " rows");
}

// A measured difference as "%.3g" writes it.
std::string three_digits(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

}  // namespace

std::string query_row_use_words(const QueryRowUse& u, ReportLang lang) {
    const Words w{lang};
    const std::string n = std::to_string(u.layer), next_layer = std::to_string(u.layer + 1);
    const std::string next =
        w.zh() ? "第 " + next_layer + " 层的 K/V 行" : "layer " + next_layer + "'s K/V rows";
    std::string s = w.zh() ? "第 " + n + " 层：算了 " + rows(u.computed, "query", "查询", w) +
                                 "：" + std::to_string(u.for_output) + " 行用于这个 token 的输出"
                           : "layer " + n + ": computed " + rows(u.computed, "query", "查询", w) +
                                 ": " + std::to_string(u.for_output) + " for this token's output";
    if (u.build_next_kv > 0)
        s += w.zh() ? "，" + std::to_string(u.build_next_kv) + " 行用来构建" + next + "（存进缓存）"
                    : ", " + std::to_string(u.build_next_kv) + " to build " + next +
                          " (kept in the cache)";
    if (u.rebuild_next_kv > 0) {
        s += w.zh() ? "，" + std::to_string(u.rebuild_next_kv) + " 行只为重建" + next
                    : ", " + std::to_string(u.rebuild_next_kv) + " only to rebuild " + next;
        s += u.rebuilt_changed ? w(" (no causal mask: each changed, no cache could keep them)",
                                   "（没有因果掩码：每一行都变了，缓存留不住）")
                               : w(" (the step before computed them too)", "（上一步也算过它们）");
    }
    if (u.thrown_away > 0)
        s += std::string(w(", ", "，")) + std::to_string(u.thrown_away) +
             w(" thrown away (the last layer: nothing reads their output)",
               " 行被丢弃（最后一层：没有谁读它们的输出）");
    if (u.computed == u.for_output)
        s += w("; no earlier token's query is needed", "；用不到任何更早 token 的查询");
    return s;
}

std::string kv_reuse_words(const StepRecord& r, int layer, ReportLang lang) {
    const Words w{lang};
    if (r.kv_rows_recomputed == 0) {
        const int read = r.kv.len - r.kv_rows_written;
        std::string s;
        if (read > 0)
            s = w.zh() ? "从缓存读了 " + std::to_string(read) + " 行 K/V，"
                       : "read " + rows(read, "cached K/V", "", w) + ", ";
        return s + (w.zh() ? "新写入 " + std::to_string(r.kv_rows_written) + " 行 K/V"
                           : "wrote " + rows(r.kv_rows_written, "new K/V", "", w));
    }
    // Every uncached step (no cache, compare mode's twin, both sessions of the bidirectional
    // view) recomputes rows an earlier step computed: that step is what it is compared with.
    std::string s =
        w.zh() ? "上一步算过的 " + std::to_string(r.kv_rows_recomputed) + " 行 K/V 又算了一遍，"
               : "recomputed " + rows(r.kv_rows_recomputed, "K/V", "", w) +
                     " the step before computed, ";
    const double d = kv_recomputed_delta(r, layer);
    if (d < 0)
        s += w("not compared (the trace keeps no K/V rows)", "没有比较（记录里没留 K/V 行）");
    else if (d == 0)
        s += w("all equal to that step's rows (max |Δ| = 0)", "与上一步的完全相同（最大 |Δ| = 0）");
    else
        s += w("differing from that step's rows by at most |Δ| = ", "与上一步的最多相差 |Δ| = ") +
             three_digits(d);
    const int wrote = r.kv_rows_written - r.kv_rows_recomputed;
    return s + (w.zh() ? "，并新写入 " + std::to_string(wrote) + " 行 K/V"
                       : ", and wrote " + rows(wrote, "new K/V", "", w));
}

std::string why_not_q_words(const StepRecord& r, int layer, int n_layers, ReportLang lang) {
    const std::vector<QueryRowUse> use = query_row_use(r, n_layers);
    if (layer < 0 || layer >= static_cast<int>(use.size())) return kv_reuse_words(r, -1, lang);
    return query_row_use_words(use[layer], lang) + Words{lang}("; ", "；") +
           kv_reuse_words(r, layer, lang);
}

}  // namespace kvs
