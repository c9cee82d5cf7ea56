#include "lessonlib/roofline.h"

namespace kvs {
namespace {

RooflinePoint point(const ScaleReport& r, Phase p, bool asked) {
    const PhaseCost& c = p == Phase::Prefill ? r.prefill : r.decode;
    RooflinePoint out;
    out.phase = p;
    out.batch = r.query.batch;
    out.context = r.query.context;
    out.intensity = c.intensity;
    out.flops_per_second = c.seconds() > 0 ? c.flops / c.seconds() : 0;
    out.asked = asked;
    return out;
}

}  // namespace

Roofline roofline_of_scale(const ScaleReport& r) {
    Roofline out;
    out.roof_name = r.gpu.name;
    out.roof_source = r.gpu.source;
    out.peak_flops = r.gpu.peak_flops;
    out.bandwidth = r.gpu.bandwidth;
    // Neighbours first, so the query's own points draw on top.
    for (int b : {1, 4, 16, 64, 256}) {
        if (b == r.query.batch) continue;
        ScaleQuery q = r.query;
        q.batch = b;
        out.points.push_back(point(scale_report(q, r.model), Phase::Decode, false));
    }
    for (int div : {8, 4, 2}) {
        ScaleQuery q = r.query;
        q.context = r.query.context / div;
        if (q.context < 1) continue;
        out.points.push_back(point(scale_report(q, r.model), Phase::Prefill, false));
    }
    out.points.push_back(point(r, Phase::Prefill, true));
    out.points.push_back(point(r, Phase::Decode, true));
    return out;
}

}  // namespace kvs
