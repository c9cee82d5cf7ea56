#pragma once
// kvscope's one numbering, the same in the window, the CLI, the JSON, the CSV and the lessons:
// positions count from 1 (the first prompt token, <s> where the model has one, is at position 1,
// as in the tutorials' table), and a query row is named by the position of its token: "the query
// at position 8" is row 8 of the attention matrix, whichever step computed it (`--explain
// L,H,P`, `kvscope-cli explain --row P`, a lesson's `@explain L H P` all take that position).
// Layers, heads, K/V heads and steps count from 0 (step 0 is the prefill), as the options take
// them (--layer, --head, --step). A token's index into the sequence (StepRecord::pos0,
// AttentionRows::q_pos0, AttentionExplain::q_pos) is its position - 1; the JSON that writes
// indexes says so beside them.
#include <string>

namespace kvs {

inline int position_of_index(int index) {
    return index + 1;
}
inline int index_of_position(int position) {
    return position - 1;
}

// A query row as every front end names it: "the query at position 5".
inline std::string query_row_words(int token_index) {
    return "the query at position " + std::to_string(position_of_index(token_index));
}

// The line a front end prints to say how it numbers.
inline constexpr const char* kNumberingWords =
    "numbering: positions from 1 (a query row is named by its position); layers, heads and "
    "steps from 0";

}  // namespace kvs
