#include "core/model/backend.h"

#include <algorithm>

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

void BlockTable::check() const {
    if (!blocks || size <= 0 || block_size <= 0)
        throw Error("a paged op needs a block table and a block size");
}

void PagedKeys::check() const {
    table.check();
    if (sinks < 0 || skip < 0) throw Error("a paged attention needs sinks and skip not negative");
}

void Backend::kv_append_paged(DeviceSpan pool_k, DeviceSpan pool_v, DeviceSpan k, DeviceSpan v,
                              int pos0, int T, int kv_dim, const BlockTable& table) {
    table.check();
    const std::size_t kv = std::size_t(kv_dim);
    for (int p = pos0; p < pos0 + T;) {
        const int run = std::min(table.block_size - p % table.block_size, pos0 + T - p);
        const std::size_t len = std::size_t(run) * kv, at = std::size_t(p - pos0) * kv;
        copy_rows(pool_k.at(table.row(p) * kv, len), len, k.at(at, len), len, 1, len);
        copy_rows(pool_v.at(table.row(p) * kv, len), len, v.at(at, len), len, 1, len);
        p += run;
    }
}

void Backend::attention_paged(DeviceSpan, DeviceSpan, DeviceSpan, DeviceSpan, DeviceSpan, int, int,
                              int, int, int, bool, const PagedKeys&) {
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
