#include "core/session/trace.h"

#include <algorithm>

namespace kvs {

const char* phase_name(Phase p) {
    return p == Phase::Prefill ? "prefill" : "decode";
}
const char* mode_name(CacheMode m) {
    return m == CacheMode::Cached ? "cached" : "uncached";
}

std::size_t StepRecord::payload_bytes() const {
    return logits.capacity() * sizeof(float) + attention.bytes() +
           kv_rows.capacity() * sizeof(float) + head_outputs.capacity() * sizeof(float) +
           (q_rows.capacity() + attn_out.capacity() + projections.capacity()) * sizeof(float) +
           ops.bytes();
}

void StepRecord::drop_payload() {
    // Move-assign fresh objects: `v = {}` would keep the capacity, freeing nothing.
    logits = std::vector<float>();
    attention = AttentionRows();
    kv_rows = std::vector<float>();
    kv_rows_kept = 0;
    head_outputs = std::vector<float>();
    q_rows = std::vector<float>();
    attn_out = std::vector<float>();
    projections = std::vector<float>();
    ops = OpLog();
    payload_evicted = true;
}

void Trace::push(StepRecord&& r) {
    payload_bytes_ += r.payload_bytes();
    if (r.payload_evicted) ++evicted_;  // a replayed step the recording had dropped
    steps_.push_back(std::move(r));
    enforce_budget();
}

void Trace::clear() {
    steps_.clear();
    payload_bytes_ = 0;
    evicted_ = 0;
    next_victim_ = 1;
}

void Trace::reserve(std::size_t n) {
    steps_.reserve(std::min(n, kReserveSteps));
}

void Trace::set_budget(std::size_t b) {
    budget_ = b;
    enforce_budget();
}

void Trace::enforce_budget() {
    // Oldest decode steps first, never the newest step (the one views are showing), the prefill
    // only when nothing else is left.
    while (payload_bytes_ > budget_ && steps_.size() > 1) {
        StepRecord* victim = nullptr;
        if (next_victim_ + 1 < steps_.size()) {
            victim = &steps_[next_victim_++];
        } else if (!steps_[0].payload_evicted) {
            victim = &steps_[0];
        } else {
            break;
        }
        if (victim->payload_evicted) continue;
        payload_bytes_ -= victim->payload_bytes();
        victim->drop_payload();
        ++evicted_;
    }
}

}  // namespace kvs
