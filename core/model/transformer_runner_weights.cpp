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
    for (int l = 0; l < config_.n_layers; ++l) {
        adopt(device_compact_.wq[l], MatrixKind::wq);
        adopt(device_compact_.wk[l], MatrixKind::wk);
        adopt(device_compact_.wv[l], MatrixKind::wv);
        adopt(device_compact_.wo[l], MatrixKind::wo);
        adopt(device_compact_.w1[l], MatrixKind::w1);
        adopt(device_compact_.w2[l], MatrixKind::w2);
        adopt(device_compact_.w3[l], MatrixKind::w3);
    }
    adopt(device_compact_.wcls, MatrixKind::wcls);
    if (device_compact_.embedding.data) adopt(device_compact_.embedding, MatrixKind::embedding);
}

bool TransformerRunner::fused_fits() const {
    FusedOps* f = be_.fused();
    if (!f || !f->fused_on() || config_.gpt2() ||
        !f->fused_fits(config_.n_heads, config_.n_kv_heads, config_.head_dim()))
        return false;
    if (!device_compact_.held()) return true;
    if (device_compact_.embedding.data) return false;  // the fused kernels read a float32 table
    for (const auto* list :
         {&device_compact_.wq, &device_compact_.wk, &device_compact_.wv, &device_compact_.wo,
          &device_compact_.w1, &device_compact_.w2, &device_compact_.w3})
        for (const CompactMatrix& m : *list)
            if (!f->fused_reads(m.type)) return false;
    return f->fused_reads(device_compact_.wcls.type);
}

FusedMatrix TransformerRunner::fused_matrix(MatrixKind kind, int l) const {
    const LlamaWeights& W = *float_weights_;
    const auto [rows, n] = matrix_shape(config_, kind);
    const float* host = nullptr;
    CompactMatrix cm;
    switch (kind) {
        case MatrixKind::wq:
            host = W.wq, cm = at(device_compact_.wq, l);
            break;
        case MatrixKind::wk:
            host = W.wk, cm = at(device_compact_.wk, l);
            break;
        case MatrixKind::wv:
            host = W.wv, cm = at(device_compact_.wv, l);
            break;
        case MatrixKind::wo:
            host = W.wo, cm = at(device_compact_.wo, l);
            break;
        case MatrixKind::w1:
            host = W.w1, cm = at(device_compact_.w1, l);
            break;
        case MatrixKind::w2:
            host = W.w2, cm = at(device_compact_.w2, l);
            break;
        case MatrixKind::w3:
            host = W.w3, cm = at(device_compact_.w3, l);
            break;
        case MatrixKind::wcls:
            host = W.wcls, cm = device_compact_.wcls;
            break;
        case MatrixKind::embedding:  // not a matrix the fused kernels multiply by
            break;
    }
    if (cm.data) return {DeviceSpan{}, cm.type, cm.data};
    const std::size_t size = rows * n;
    return {w(host + (kind == MatrixKind::wcls ? 0 : l * size), size), GgmlType::F32, nullptr};
}

}  // namespace kvs
