#pragma once
// One step through every layer, as a map of the model draws it: the new token's path, and per
// layer the K/V rows read from the cache and written, with the cache and without it. Without it
// every earlier row is recomputed, and each layer below the last computes every earlier token's
// query again, needed only to rebuild the next layer's K/V rows (core/session/why_not_q.h): the
// why-not-Q chain runs up the layers and ends at the last, where no layer reads an earlier row's
// output. With the cache no layer needs an earlier token's query. The way the step ran comes
// from its record (and its measured K/V differences); the other way is counted from the same
// shapes. Without the causal mask no cache could keep the rows: only the uncached way exists.
#include <vector>

#include "core/session/trace.h"
#include "core/session/why_not_q.h"

namespace kvs {

struct RowRun {  // token indexes [first, first + count) (position - 1)
    int first = 0;
    int count = 0;
};

// One layer under one way of running the step.
struct LayerWay {
    bool possible = true;    // false: the cached way without the causal mask
    RowRun queries;          // the query rows the layer computes
    QueryRowUse use;         // what each of them is for (for_output + build + rebuild + thrown)
    int queries_needed = 0;  // rows whose output something reads: the output and next K/V rows
    RowRun kv_read;          // K/V rows read from the cache (earlier steps wrote them)
    RowRun kv_recomputed;    // K/V rows computed again though an earlier step computed them
    RowRun kv_written;       // K/V rows written new (this step's tokens)
    // Measured largest |recomputed - held| of this layer's K and V rows (the way the step ran,
    // and only when it compared them); -1: not measured.
    double kv_delta = -1;
};

struct LayerMap {
    int layer = 0;
    LayerWay cached, uncached;
};

struct StepMap {
    int step = 0;
    Phase phase = Phase::Prefill;
    CacheMode mode = CacheMode::Cached;  // how the step ran (the other way is counted)
    AttentionMask mask = AttentionMask::Causal;
    int n_layers = 0;
    int held_before = 0;           // rows the cache held before the step
    RowRun joined;                 // the tokens that joined: their path runs through every layer
    int len = 0;                   // rows after the step
    std::vector<LayerMap> layers;  // [n_layers]
};

StepMap step_map(const StepRecord& r, int n_layers);

}  // namespace kvs
