#pragma once
// Which keys a query sees: itself and the earlier ones (a decoder's causal mask), or every key of
// the pass (an encoder's, as BERT and T5 attend). Decoder-only models are trained causal; run
// bidirectional, appending a token changes the earlier tokens' K/V rows from layer 1 on, which
// is why only a causal model can keep them in a cache (core/session/session.h measures it per
// layer). A bounded cache (StreamingLLM's attention sinks and a sliding window) narrows the
// causal mask further: the one rule is key_visible, which the runner's gather under a window
// (core/model/model.h's set_window) and every view of the mask (core/session/attention_explain.h)
// read.
#include <algorithm>

namespace kvs {

enum class AttentionMask { Causal, Bidirectional };

inline const char* mask_name(AttentionMask m) {  // "causal", "bidirectional"
    return m == AttentionMask::Causal ? "causal" : "bidirectional";
}

// The mask of a pass: causal or not, and a bounded cache's sinks and window (window 0: every
// cached row).
struct KeyMask {
    AttentionMask mask = AttentionMask::Causal;
    int sinks = 0;
    int window = 0;
};

// Of the rows cached before a pass that starts at token index `pass_first`, a window keeps
// [0, sinks_end) and [from, pass_first); without a window every one ([0, pass_first)).
struct CachedRowsSeen {
    int sinks_end = 0;
    int from = 0;
};
inline CachedRowsSeen cached_rows_seen(const KeyMask& m, int pass_first) {
    if (m.window <= 0) return {pass_first, pass_first};
    const int sinks = std::min(std::max(m.sinks, 0), pass_first);
    return {sinks, std::max(sinks, pass_first - m.window)};
}

// Whether the query at token index q sees the key at token index k (both indexes into the
// sequence, position - 1) in a pass whose first new row is `pass_first` and which holds `n_keys`
// keys in all. Causal: k <= q, and under a window only the sinks and the window's rows of the
// cache before the pass (the pass's own rows up to q are all seen). Bidirectional: every key.
inline bool key_visible(const KeyMask& m, int q, int k, int pass_first, int n_keys) {
    if (k < 0 || k >= n_keys) return false;
    if (m.mask == AttentionMask::Bidirectional) return true;
    if (k > q) return false;
    if (k >= pass_first) return true;
    const CachedRowsSeen seen = cached_rows_seen(m, pass_first);
    return k < seen.sinks_end || k >= seen.from;
}

}  // namespace kvs
