#include "core/tokenizers/llama_vocab_rules.h"

#include <cctype>
#include <queue>

namespace kvs {

void merge_by_score(std::vector<int>& ids, int first, const MergePair& pair) {
    // List order never changes, so "leftmost" is "smallest index".
    const int n = static_cast<int>(ids.size());
    std::vector<int> next(n), prev(n), version(n, 0);
    for (int i = 0; i < n; ++i) {
        next[i] = i + 1 < n ? i + 1 : -1;
        prev[i] = i - 1;
    }
    struct Cand {
        float score;
        int left, right, merged, vl, vr;
        bool operator<(const Cand& o) const {  // max-heap on score, then min on position
            return score != o.score ? score < o.score : left > o.left;
        }
    };
    std::priority_queue<Cand> heap;
    auto consider = [&](int l) {
        // Markers never merge: with a tokenizer that holds an empty piece, "" + "" would
        // otherwise swallow BOS (found by fuzz_tokenizer_parse).
        const int r = l < first ? -1 : next[l];
        if (r < 0) return;
        const MergeResult m = pair(ids[l], ids[r]);
        if (m.id >= 0) heap.push({m.score, l, r, m.id, version[l], version[r]});
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);
    std::vector<bool> alive(n, true);
    while (!heap.empty()) {
        const Cand c = heap.top();
        heap.pop();
        if (!alive[c.left] || !alive[c.right] || next[c.left] != c.right ||
            version[c.left] != c.vl || version[c.right] != c.vr)
            continue;
        ids[c.left] = c.merged;
        ++version[c.left];
        alive[c.right] = false;
        next[c.left] = next[c.right];
        if (next[c.right] >= 0) prev[next[c.right]] = c.left;
        if (prev[c.left] >= 0) consider(prev[c.left]);
        consider(c.left);
    }
    std::vector<int> out;
    for (int i = 0; i >= 0 && i < n; i = next[i]) out.push_back(ids[i]);
    ids = std::move(out);
}

int byte_of_piece(const std::string& p) {
    if (p.size() < 4 || p.compare(0, 3, "<0x") != 0) return -1;
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    const int hi = hex(p[3]);
    if (hi < 0) return -1;
    const int lo = p.size() > 4 ? hex(p[4]) : -1;
    return lo < 0 ? hi : hi * 16 + lo;
}

std::string printable_piece(std::string p) {
    if (p.size() == 1) {
        const auto c = static_cast<unsigned char>(p[0]);
        if (!(std::isprint(c) || std::isspace(c))) return {};
    }
    return p;
}

}  // namespace kvs
