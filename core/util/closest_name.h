#pragma once
// "Did you mean": the known name nearest a misspelt one (a lesson's @directive, a command line's
// option or subcommand).
#include <string>
#include <vector>

namespace kvs {

// Insertions, deletions, substitutions and swaps of two neighbours between a and b (bytes): a
// typed "lenghts" is one edit from "lengths", nearer than "weights".
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest `word` within `max_distance` edits (the first of equals); "" when none
// is that near, so a word unlike every name gets no guess.
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates,
                         std::size_t max_distance = 2);

}  // namespace kvs
