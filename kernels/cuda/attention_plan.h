#pragma once
// Backend::attention (core/model/backend.h) as both CUDA backends launch it: which kernels, their
// shapes and arguments, and what a graph recording changes (core/model/step_graphs.h). The cuda
// backend launches the plan on a stream, the emulated one on the CPU. Host C++; no CUDA needed.
#include <cstddef>

#include "core/model/backend.h"
#include "kernels/cuda/launch_shapes.h"

namespace kvs::kern {

// Backend::attention's arguments.  out, q: [T, n_heads * head_dim]; cache_k, cache_v:
// [capacity, n_kv_heads * head_dim]; probs: [n_heads, T, stride] or empty.
struct AttentionCall {
    DeviceSpan out, q, cache_k, cache_v, probs;
    int T = 0, pos0 = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
    bool causal = true;
};

// While a decode step is recorded: its position is read from device memory at each replay, and
// the split grid is sized for the most keys the replays will see (StepGraphs::position_of).
struct Recording {
    bool on = false;
    const int* pos_at = nullptr;
    int max_keys = 0;
};

// One flash-style prefill kernel, or the decode split and its combine. Before a decode launch the
// backend points args.partial at partial_floats floats of its own (sized for the whole cache, so
// that it grows only with the cache).
struct AttentionPlan {
    AttentionArgs args{};
    bool prefill = false;
    LaunchShape prefill_shape, split, combine;
    std::size_t partial_floats = 0;
    int kernels() const { return prefill ? 1 : 2; }
};

// Throws kvs::Error, before anything is queued, for a shape that does not fit and for a prefill
// while recording (a decode graph records decode steps only).
AttentionPlan plan_attention(const AttentionCall& c, const Recording& rec,
                             unsigned combine_threads);

// A paged attention (Backend::attention_paged): the plan reads keys through the block table, which
// the backend has copied to `device_table` (keys.table.size ints) before the launch.
void plan_paged(AttentionPlan& p, const PagedKeys& keys, const int* device_table);

}  // namespace kvs::kern
