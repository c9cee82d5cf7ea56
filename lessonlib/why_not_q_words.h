#pragma once
// Why K and V are cached and Q is not, in words: core/session/why_not_q.h counts each layer's
// query rows and the step's K/V rows; these say them, in English or Chinese, each sentence worded
// once with its two languages side by side. For the CLI (explain), the window (Attention, Inside
// attention) and the lessons' reports alike.
#include <string>

#include "core/session/why_not_q.h"
#include "lessonlib/report_lang.h"

namespace kvs {

// One layer's accounting in one line: "layer 0: computed 8 query rows: 1 for this token's output,
// 7 only to rebuild layer 1's K/V rows (the step before computed them too)".
std::string query_row_use_words(const QueryRowUse& u, ReportLang lang);

// What the step did with layer `layer`'s K/V rows (every layer's when `layer` < 0), from its counts
// and its measured comparison: "read 7 cached K/V rows, wrote 1 new K/V row", or "recomputed 7
// K/V rows the step before computed, all equal to that step's rows (max |Δ| = 0), and wrote 1 new
// K/V row". An uncached step's words name the step before, not a cache: the bidirectional view has
// none.
std::string kv_reuse_words(const StepRecord& r, int layer, ReportLang lang);

// Layer `layer`'s "why not Q" in one line: its query rows, then the step's K/V rows (only the K/V
// rows, every layer's, when `layer` is not one of the model's `n_layers`).
std::string why_not_q_words(const StepRecord& r, int layer, int n_layers, ReportLang lang);

}  // namespace kvs
