#include "core/counts.h"

namespace kvs {

double weight_bytes(const ModelConfig& c, double bytes_per_value) {
    return bytes_per_value * static_cast<double>(c.parameter_count());
}

StepCounts count_llama_forward(const ModelConfig& c, int pos0, int T, double bytes_per_value) {
    const double d = c.dim, h = c.hidden_dim, L = c.n_layers, kv = c.kv_dim(), V = c.vocab_size;
    const double rows = T;
    // Keys seen by all query rows: sum over t of (pos0 + t + 1).
    const double keys = rows * pos0 + rows * (rows + 1) / 2;
    StepCounts s;
    const double linear_weights_per_layer = d * d + 2 * kv * d + d * d + 3 * h * d;
    s.matmul_flops = 2 * rows * L * linear_weights_per_layer + 2 * d * V;
    s.attention_flops = L * 4 * d * keys;
    const double small =
        L * rows * (2 * 4 * d + 3 * (d + kv) + 6 * h + 2 * d) + L * c.n_heads * keys * 5 + 4 * d;
    s.flops = s.matmul_flops + s.attention_flops + small;
    const double kv_read = bytes_per_value * L * 2 * kv * (pos0 + rows);
    const double kv_written = bytes_per_value * L * 2 * kv * rows;
    s.bytes = weight_bytes(c, bytes_per_value) + kv_read + kv_written;
    return s;
}

}  // namespace kvs
