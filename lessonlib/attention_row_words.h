#pragma once
// One key of an explained attention row (core/session/attention_explain.h: its position, where its
// K/V rows came from, q·k, ×1/√d_k, the mask, the kernel's weight) as text, written here once for
// every front end: kvscope-cli explain's table, the lesson log's @explain lines and the numbers of
// the window's Inside attention. The token's piece is each front end's to quote.
#include <cstddef>
#include <string>

#include "core/session/attention_explain.h"
#include "lessonlib/report_lang.h"

namespace kvs {

// A number of the row: 4 significant digits, -0 as 0, infinities as -inf and inf, NaN (no key
// reached it) as none.
std::string attention_number(float v);
// "[a, b, c]" of attention_number's.
std::string attention_numbers(const float* v, std::size_t n);

// Where a key's K/V rows came from: "cached", "new", "recomputed" (core's words), 来自缓存 ...
const char* key_source_words(KvSource s, ReportLang lang);

struct KeyCells {
    int position = 0;                 // from 1 (core/util/numbering.h)
    std::string source;               // key_source_words
    std::string raw, scaled, weight;  // q·k, ×1/√d_k, the kernel's weight: attention_number's
    bool masked = false;              // after the query (or outside its window): weight 0
};
// Key `j` of the explained row `e`.
KeyCells key_cells(const AttentionExplain& e, int j, ReportLang lang);

}  // namespace kvs
