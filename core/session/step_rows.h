#pragma once
// Which step of a trace holds a position: its query row (the attention weights, q and output a
// step kept for it) or its K/V row (the rows a step wrote). Written once for every reader: Inside
// attention and the attention matrix (core/session/attention_explain.h,
// core/session/attention_matrix.h), the CSV, `kvscope-cli explain` and the lessons' @explain.
// Positions are given as token indexes (position - 1, core/util/numbering.h).
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/session/trace.h"

namespace kvs {

// The query rows a step holds, [first, first + count) as token indexes: its kept attention rows,
// or, once its payload was dropped, the rows it kept by rule (the prompt at the prefill, the
// newest row at a decode step).
struct QueryRows {
    int first = 0;
    int count = 0;
    bool has(int index) const { return index >= first && index < first + count; }
};
QueryRows query_rows_of(const StepRecord& r);

// A query row: the step that holds it and its row among that step's kept rows.
struct QueryAt {
    int step = 0;
    int row = 0;
    int index = 0;  // the query's token index (position - 1)
};

// The query at token index `index` as the trace stands after step `upto`: step `upto` itself
// where it holds that row (a prefill its prompt, an uncached step that kept every row, a cached
// decode step its newest), else the earliest step that holds it: a causal row is the same
// whichever step computes it (one that still has its payload first). A step without the causal mask
// computes every row anew over every key, so only step `upto` holds its rows. index < 0: the newest
// row of step `upto`. nullopt when no step up to `upto` holds it (`upto` out of range: the last
// step).
std::optional<QueryAt> query_row_at(std::span<const StepRecord> steps, int upto, int index);

// A K/V row: the step whose kv_rows hold it and its row there (-1: that step's payload was
// dropped); step null when no step up to `upto` wrote the position.
struct KvAt {
    const StepRecord* step = nullptr;
    int row = -1;
};
// Every position of the cache after step `upto` (its kv.len of them), in one pass: step `upto`'s
// own rows where it kept that position's (the bidirectional session keeps every row: each one
// changed), else the step that introduced the position.
std::vector<KvAt> kv_rows_at(std::span<const StepRecord> steps, int upto);

// Why step `step` holds no query row at `index`, in one line a user can read: which rows it
// holds, and which step holds the one asked for.
std::string no_query_row_words(std::span<const StepRecord> steps, int step, int index);

}  // namespace kvs
