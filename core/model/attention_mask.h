#pragma once
// Which keys a query sees: itself and the earlier ones (a decoder's causal mask), or every key of
// the pass (an encoder's, as BERT and T5 attend). Decoder-only models are trained causal; run
// bidirectional, appending a token changes the earlier tokens' K/V rows from layer 1 on, which
// is why only a causal model can keep them in a cache (core/session/session.h measures it per
// layer).
namespace kvs {

enum class AttentionMask { Causal, Bidirectional };

inline const char* mask_name(AttentionMask m) {  // "causal", "bidirectional"
    return m == AttentionMask::Causal ? "causal" : "bidirectional";
}

}  // namespace kvs
