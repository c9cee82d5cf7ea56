#pragma once
// Every op of one step's forward pass, in the order it ran, for the window's op strip and the
// CLI: which op, which layer, input and output shapes [rows, features], FLOPs counted from those
// shapes (core/model/counts.h, the same rules as a step's total) and the time measured by the
// backend for that call. At decode every projection has 1 row (matrix . vector), at prefill T rows
// (matrix . matrix).
#include <cstddef>
#include <string>
#include <vector>

#include "core/model/backend.h"
#include "core/model/counts.h"

namespace kvs {

struct OpRecord {
    OpKind kind = OpKind::Embedding;
    int layer = -1;  // -1 outside the layers
    OpShape in, out;
    double flops = 0;  // counted from the shapes
    // Measured by the backend for this op's call (CPU clock, CUDA events); -1 when not measured
    // separately: see timed_with.
    double seconds = -1;
    // >= 0: this op ran inside the call of ops[timed_with] (attention is one fused kernel:
    // scores, softmax and weights . V), whose seconds cover them all.
    int timed_with = -1;
    int call = -1;  // index of the backend call among the pass's timed calls, -1: none
};

struct OpLog {
    std::vector<OpRecord> ops;
    int calls = 0;  // backend calls the ops issued, in order
    // Appends an op that is one backend call (call >= 0), or part of the previous call.
    void add(OpKind k, const ModelConfig& c, int layer, int rows, int pos0, bool own_call = true);
    // Appends an op timed on the host, outside the backend (sampling).
    void add_host(OpKind k, const ModelConfig& c, int rows, double seconds);
    // Fills seconds from the backend's per-call times (Backend::op_calls()); leaves -1 when the
    // backend did not record exactly the calls the log issued.
    void resolve(const std::vector<OpCall>& calls);
    void append(const OpLog& o);  // a further forward pass of the same step
    double flops() const;
    std::size_t bytes() const { return ops.capacity() * sizeof(OpRecord); }
    void clear() {
        ops.clear();
        calls = 0;
    }
};

}  // namespace kvs
