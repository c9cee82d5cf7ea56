#pragma once
// kvscope's one numbering, the same in the window, the CLI, the JSON and the lessons: positions
// count from 1 (the first prompt token, <s> where the model has one, is at position 1, as in the
// tutorials' table); layers, heads, K/V heads, steps and a step's query rows count from 0, as the
// options take them (--layer, --head, --step, --row, @explain). A token's index into the sequence
// (StepRecord::pos0, AttentionRows::q_pos0, AttentionExplain::q_pos) is its position - 1.
#include <string>

namespace kvs {

inline int position_of_index(int index) {
    return index + 1;
}

// A query row of a step and the position of its token, as every front end says it:
// "row 0 (position 5)" for the decode step that feeds the fifth token.
inline std::string query_row_words(int row, int token_index) {
    return "row " + std::to_string(row) + " (position " +
           std::to_string(position_of_index(token_index)) + ")";
}

}  // namespace kvs
