#include "core/model/op_log.h"

namespace kvs {

void OpLog::add(OpKind k, const ModelConfig& c, int layer, int rows, int pos0, bool own_call) {
    const OpCount n = count_op(k, c, rows, pos0);
    OpRecord r;
    r.kind = k;
    r.layer = layer;
    r.in = n.in;
    r.out = n.out;
    r.flops = n.flops;
    if (own_call) {
        r.call = calls++;
    } else {
        // Part of the previous op's call: point at the op that owns it.
        int owner = static_cast<int>(ops.size()) - 1;
        while (owner >= 0 && ops[owner].call < 0) --owner;
        r.timed_with = owner;
    }
    ops.push_back(r);
}

void OpLog::add_host(OpKind k, const ModelConfig& c, int rows, double seconds) {
    const OpCount n = count_op(k, c, rows, 0);
    OpRecord r;
    r.kind = k;
    r.in = n.in;
    r.out = n.out;
    r.flops = n.flops;
    r.seconds = seconds;
    ops.push_back(r);
}

void OpLog::resolve(const std::vector<OpCall>& measured) {
    if (static_cast<int>(measured.size()) != calls) return;  // not timed call by call
    for (OpRecord& r : ops)
        if (r.call >= 0) r.seconds = measured[r.call].seconds;
}

void OpLog::append(const OpLog& o) {
    const int base_op = static_cast<int>(ops.size());
    for (OpRecord r : o.ops) {
        if (r.call >= 0) r.call += calls;
        if (r.timed_with >= 0) r.timed_with += base_op;
        ops.push_back(r);
    }
    calls += o.calls;
}

double OpLog::flops() const {
    double f = 0;
    for (const OpRecord& r : ops) f += r.flops;
    return f;
}

}  // namespace kvs
