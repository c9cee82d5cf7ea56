#pragma once
// What the two tokenizers of llama's vocabulary share: BpeTokenizer (llama2.c's tokenizer.bin)
// and SpmTokenizer (SentencePiece-style, from GGUF metadata). The merge rule is run.c's and
// SentencePiece's BPE model's: over and over, merge the adjacent pair whose concatenation is a
// vocabulary entry with the highest score, the leftmost pair on ties.
#include <functional>
#include <string>
#include <vector>

namespace kvs {

// What merging ids `left` and `right` gives: the merged id (or -1: they do not merge) and its
// score.
struct MergeResult {
    int id = -1;
    float score = 0.0f;
};
using MergePair = std::function<MergeResult(int left, int right)>;

// Merges `ids` in place by that rule; ids[0 .. first) are markers (BOS) that never merge.
// A heap with lazy invalidation: O(n log n) for n ids.
void merge_by_score(std::vector<int>& ids, int first, const MergePair& pair);

// The byte a "<0xXX>" piece stands for, or -1 (run.c matches the prefix with sscanf).
int byte_of_piece(const std::string& p);

// What a terminal front end prints for decoded bytes `p`: run.c skips a lone unprintable byte.
std::string printable_piece(std::string p);

}  // namespace kvs
