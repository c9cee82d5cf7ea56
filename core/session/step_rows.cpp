#include "core/session/step_rows.h"

#include <algorithm>

#include "core/util/numbering.h"

namespace kvs {

QueryRows query_rows_of(const StepRecord& r) {
    if (r.attention.rows > 0) return {r.attention.q_pos0, r.attention.rows};
    if (r.phase == Phase::Prefill) return {0, r.kv.len};
    return {r.kv.len - 1, r.kv.len > 0 ? 1 : 0};
}

std::optional<QueryAt> query_row_at(std::span<const StepRecord> steps, int upto, int index) {
    const int n = static_cast<int>(steps.size());
    if (n == 0) return std::nullopt;
    if (upto < 0 || upto >= n) upto = n - 1;
    const QueryRows own = query_rows_of(steps[upto]);
    if (index < 0) {
        if (own.count <= 0) return std::nullopt;
        return QueryAt{upto, own.count - 1, own.first + own.count - 1};
    }
    if (own.has(index)) return QueryAt{upto, index - own.first, index};
    if (steps[upto].mask == AttentionMask::Bidirectional) return std::nullopt;
    // A step that still has its payload first; else the one whose payload was dropped (the
    // views then say so).
    for (bool kept : {true, false})
        for (int k = 0; k < upto; ++k) {
            if (kept && steps[k].attention.rows == 0) continue;
            const QueryRows rows = query_rows_of(steps[k]);
            if (rows.has(index)) return QueryAt{k, index - rows.first, index};
        }
    return std::nullopt;
}

std::vector<KvAt> kv_rows_at(std::span<const StepRecord> steps, int upto) {
    const int n = static_cast<int>(steps.size());
    if (n == 0) return {};
    if (upto < 0 || upto >= n) upto = n - 1;
    const StepRecord& at = steps[upto];
    std::vector<KvAt> out(std::max(at.kv.len, 0));
    const int len = static_cast<int>(out.size());
    if (!at.kv_rows.empty())
        for (int r = 0; r < at.kv_rows_kept; ++r) {
            const int p = at.kv.len - at.kv_rows_kept + r;
            if (p >= 0 && p < len) out[p] = {&at, r};
        }
    int introduced = 0;  // positions below it were introduced by an earlier step
    for (int s = 0; s <= upto && introduced < len; ++s) {
        const StepRecord& r = steps[s];
        const int first = r.kv.len - r.kv_rows_kept;
        for (int p = introduced; p < std::min(r.kv.len, len); ++p) {
            if (out[p].step) continue;
            out[p] = {&r, r.kv_rows.empty() || p < first ? -1 : p - first};
        }
        introduced = std::max(introduced, r.kv.len);
    }
    return out;
}

std::string no_query_row_words(std::span<const StepRecord> steps, int step, int index) {
    const std::string pos = "position " + std::to_string(position_of_index(index));
    if (step < 0 || step >= static_cast<int>(steps.size()))
        return "step " + std::to_string(step) + " does not exist";
    const QueryRows rows = query_rows_of(steps[step]);
    std::string held =
        rows.count <= 0 ? std::string("no query row")
        : rows.count == 1
            ? "the query at position " + std::to_string(position_of_index(rows.first)) + " only"
            : "the queries at positions " + std::to_string(position_of_index(rows.first)) + ".." +
                  std::to_string(position_of_index(rows.first + rows.count - 1));
    std::string s = "step " + std::to_string(step) + " holds " + held + ", not " + pos;
    if (const auto at = query_row_at(steps, step, index); at && at->step != step)
        s += " (step " + std::to_string(at->step) + " computed it)";
    return s;
}

}  // namespace kvs
