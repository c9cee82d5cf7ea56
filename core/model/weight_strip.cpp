#include "core/model/weight_strip.h"

#include <algorithm>
#include <cmath>

#include "core/model/transformer_model.h"

namespace kvs {

bool matrix_rows(const Model& m, MatrixKind kind, int layer, int first, int n,
                 std::vector<float>& out) {
    const auto* tm = dynamic_cast<const TransformerModel*>(&m);
    if (!tm) return false;
    const ModelConfig& c = tm->config();
    const auto [rows, len] = matrix_shape(c, kind);
    if (layer < 0 || layer >= c.n_layers || first < 0 || n < 0 || std::size_t(first + n) > rows)
        return false;
    if (kind != MatrixKind::wq && kind != MatrixKind::wk && kind != MatrixKind::wv) return false;
    out.resize(std::size_t(n) * len);
    const CompactMatrix cm = tm->compact().matrix(kind, layer);
    if (cm.data) {
        dequantize_values(cm.type, cm.data + std::size_t(first) * ggml_row_bytes(cm.type, len),
                          out.size(), out.data());
        return true;
    }
    const float* floats = float_matrix(c, tm->weights(), kind, layer);
    if (!floats) return false;
    std::copy_n(floats + std::size_t(first) * len, out.size(), out.begin());
    return true;
}

std::optional<WeightStrip> weight_strip(const Model& m, MatrixKind kind, int layer, int head,
                                        int max_cols, std::string* why) {
    const ModelConfig& c = m.config();
    auto fail = [&](std::string text) -> std::optional<WeightStrip> {
        if (why) *why = std::move(text);
        return std::nullopt;
    };
    if (kind != MatrixKind::wq && kind != MatrixKind::wk && kind != MatrixKind::wv)
        return fail("a strip is drawn of W_q, W_k or W_v only");
    if (layer < 0 || layer >= c.n_layers)
        return fail("layer " + std::to_string(layer) + " does not exist");
    if (head < 0 || head >= c.n_heads)
        return fail("head " + std::to_string(head) + " does not exist");
    WeightStrip s;
    s.kind = kind;
    s.layer = layer;
    s.head = head;
    s.rows = c.head_dim();
    s.first_row = (kind == MatrixKind::wq ? head : head / c.kv_mul()) * s.rows;
    s.row_len = c.dim;
    std::vector<float> w;
    if (!matrix_rows(m, kind, layer, s.first_row, s.rows, w))
        return fail("this model keeps no weights to draw (" + m.name() + ")");
    max_cols = std::max(max_cols, 1);
    s.block = (s.row_len + max_cols - 1) / max_cols;
    s.cols = (s.row_len + s.block - 1) / s.block;
    s.cells.assign(std::size_t(s.rows) * s.cols, 0.0f);
    for (int r = 0; r < s.rows; ++r)
        for (int col = 0; col < s.cols; ++col) {
            const int from = col * s.block, to = std::min(s.row_len, from + s.block);
            double sum = 0;
            for (int j = from; j < to; ++j) {
                const float x = w[std::size_t(r) * s.row_len + j];
                sum += x;
                s.abs_max = std::max(s.abs_max, std::fabs(x));
            }
            s.cells[std::size_t(r) * s.cols + col] = static_cast<float>(sum / (to - from));
        }
    return s;
}

}  // namespace kvs
