#pragma once
// The roofline picture of lesson 9 (and of lesson 2's question, when is prefill compute-bound):
// FLOPs per byte (counted from shapes, core/model/counts.h) against FLOP/s, under the roof of a GPU
// (its datasheet's peak and bandwidth) whose corner is the ridge point. The points are the
// @scale query's prefill and decode step, and the same model at other batch sizes and prompt
// lengths, so the picture shows where they move. Their FLOP/s come from the least time at the
// GPU's peak (scale_accounting.h): counted, not measured; they sit on the roof by construction.
#include <string>
#include <vector>

#include "core/session/trace.h"
#include "lessonlib/scale_accounting.h"

namespace kvs {

struct RooflinePoint {
    Phase phase = Phase::Prefill;
    int batch = 1;
    int context = 0;              // prompt tokens per sequence (prefill), keys read (decode)
    double intensity = 0;         // FLOP per byte
    double flops_per_second = 0;  // FLOPs / least time
    bool asked = false;           // the @scale query itself (else a neighbour)
};

struct Roofline {
    std::string roof_name;    // the GPU
    std::string roof_source;  // where its figures come from
    double peak_flops = 0;    // FLOP/s
    double bandwidth = 0;     // bytes/s
    std::vector<RooflinePoint> points;
    double ridge() const { return bandwidth > 0 ? peak_flops / bandwidth : 0; }
};

// The query's prefill and decode; decode at batch 1..256 and prefill at 1/8..1 of its context
// (within the model's), each a scale_report of the same model and GPU.
Roofline roofline_of_scale(const ScaleReport& r);

}  // namespace kvs
