#pragma once
// Two backends' passes compared step by step: what the emulated CUDA suites (fused decode, decode
// graphs) share when they check a fast path against the op-by-op one bit for bit.
#include <algorithm>
#include <vector>

#include "core/model/model.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "tests/support/float_diff.h"

namespace kvs::test {

// Bit-identical results of one pass: logits and every capture (attention rows, q, the attention
// output, K/V rows).
inline bool same_pass(const ForwardResult& a, const ForwardResult& b) {
    return same_bits(a.logits, b.logits) && same_bits(a.attention.p, b.attention.p) &&
           same_bits(a.q_rows, b.q_rows) && same_bits(a.attn_out, b.attn_out) &&
           same_bits(a.kv_rows, b.kv_rows) && a.kv_rows_kept == b.kv_rows_kept;
}

// The greedy choice: the index of the largest logit (the first of equals).
inline int argmax(const std::vector<float>& v) {
    return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

// What an emulated backend counted between `before` and `now`, field by field.
inline LaunchCounts counts_since(LaunchCounts now, const LaunchCounts& before) {
    now.launches -= before.launches, now.graph_launches -= before.graph_launches;
    now.graph_kernels -= before.graph_kernels, now.graph_copies -= before.graph_copies;
    now.h2d -= before.h2d, now.d2h -= before.d2h, now.d2d -= before.d2d, now.syncs -= before.syncs;
    now.d2h_floats -= before.d2h_floats;
    now.captures -= before.captures, now.allocs -= before.allocs, now.frees -= before.frees;
    return now;
}

}  // namespace kvs::test
