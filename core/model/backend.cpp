#include "core/model/backend.h"

#include "core/files/gguf_file.h"
#include "core/util/error.h"

namespace kvs {

bool Backend::runs_compact(GgmlType) const {
    return false;
}

void Backend::matmul_compact(DeviceSpan, DeviceSpan, GgmlType type, const unsigned char*, int, int,
                             int) {
    throw Error("the " + name() + " backend computes with float32 weights only, not " +
                ggml_type_name(type));
}

void Backend::embed_compact(DeviceSpan x, GgmlType type, const unsigned char* w, const int*, int,
                            int dim) {
    matmul_compact(x, x, type, w, 0, dim, 0);  // refuses, with the same line
}

void Backend::attention_rows(DeviceSpan, DeviceSpan, const float* const*, const float* const*,
                             DeviceSpan, int, int, int, int, int, bool) {
    throw Error("the " + name() + " backend reads K/V rows from a contiguous cache only");
}

const char* op_name(Op op) {
    switch (op) {
        case Op::Embed:
            return "embed";
        case Op::RmsNorm:
            return "rmsnorm";
        case Op::Matmul:
            return "matmul";
        case Op::Rope:
            return "rope";
        case Op::KvAppend:
            return "kv_append";
        case Op::Attention:
            return "attention";
        case Op::SwiGLU:
            return "swiglu";
        case Op::Add:
            return "add";
        case Op::LayerNorm:
            return "layernorm";
        case Op::Gelu:
            return "gelu";
        case Op::Fused:
            return "fused";
        case Op::Transfer:
            return "transfer";
        case Op::kCount:
            break;
    }
    return "?";
}

double OpTimes::total() const {
    double t = 0;
    for (double s : seconds) t += s;
    return t;
}

}  // namespace kvs
