// Compact matrices (a GGUF's quantised types, --weights) adopted where the backend reads them, and
// the matrices the fused kernels take.
#include "core/model/transformer_runner.h"

namespace kvs {

void TransformerRunner::adopt_compact(const CompactWeights& cw) {
    if (!cw.held()) return;
    device_compact_ = cw;
    const auto adopt = [&](CompactMatrix& m, MatrixKind kind) {
        const auto [rows, n] = matrix_shape(config_, kind);
        m.data = be_.adopt_compact(m.data, rows * ggml_row_bytes(m.type, n));
        adopted_.push_back(m.data);
    };
    for (MatrixKind kind : kLayerMatrixKinds)
        for (CompactMatrix& m : *device_compact_.layers(kind)) adopt(m, kind);
    adopt(device_compact_.wcls, MatrixKind::wcls);
    if (device_compact_.embedding.data) adopt(device_compact_.embedding, MatrixKind::embedding);
}

bool TransformerRunner::fused_fits() const {
    FusedOps* f = be_.fused();
    if (!f || !f->fused_on() || config_.gpt2() ||
        !f->fused_fits(config_.n_heads, config_.n_kv_heads, config_.head_dim()))
        return false;
    if (!device_compact_.held()) return true;
    if (device_compact_.embedding.data) return false;     // the fused kernels read a float32 table
    for (const CompactMatrix& m : device_compact_.all())  // every layer's, then wcls
        if (!f->fused_reads(m.type)) return false;
    return true;
}

FusedMatrix TransformerRunner::fused_matrix(MatrixKind kind, int l) const {
    const CompactMatrix cm = device_compact_.matrix(kind, l);
    if (cm.data) return {DeviceSpan{}, cm.type, cm.data};
    const auto [rows, n] = matrix_shape(config_, kind);
    return {w(float_matrix(config_, *float_weights_, kind, l), rows * n), GgmlType::F32, nullptr};
}

}  // namespace kvs
