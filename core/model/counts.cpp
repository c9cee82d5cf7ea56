#include "core/model/counts.h"

#include <cmath>

namespace kvs {

const char* op_kind_name(OpKind k) {
    switch (k) {
        case OpKind::Embedding:
            return "embedding";
        case OpKind::RmsNorm:
            return "rmsnorm";
        case OpKind::QProj:
            return "q projection";
        case OpKind::KProj:
            return "k projection";
        case OpKind::VProj:
            return "v projection";
        case OpKind::QBias:
            return "q bias";
        case OpKind::KBias:
            return "k bias";
        case OpKind::VBias:
            return "v bias";
        case OpKind::Rope:
            return "rope";
        case OpKind::KvAppend:
            return "kv append";
        case OpKind::Scores:
            return "scores q.k";
        case OpKind::Softmax:
            return "softmax";
        case OpKind::WeightedSum:
            return "x V";
        case OpKind::OutProj:
            return "output projection";
        case OpKind::Residual:
            return "residual";
        case OpKind::FfnNorm:
            return "mlp rmsnorm";
        case OpKind::FfnGate:
            return "mlp gate (w1)";
        case OpKind::FfnUp:
            return "mlp up (w3)";
        case OpKind::SwiGLU:
            return "mlp swiglu";
        case OpKind::FfnDown:
            return "mlp down (w2)";
        case OpKind::FfnResidual:
            return "mlp residual";
        case OpKind::FinalNorm:
            return "final rmsnorm";
        case OpKind::Classifier:
            return "classifier";
        case OpKind::Sampling:
            return "sampling";
        case OpKind::PosEmbedding:
            return "position embedding";
        case OpKind::PosAdd:
            return "token + position";
        case OpKind::LayerNorm:
            return "layernorm";
        case OpKind::OutBias:
            return "output bias";
        case OpKind::FfnLayerNorm:
            return "mlp layernorm";
        case OpKind::MlpUp:
            return "mlp up (c_fc)";
        case OpKind::MlpUpBias:
            return "mlp up bias";
        case OpKind::Gelu:
            return "mlp gelu";
        case OpKind::MlpDown:
            return "mlp down (c_proj)";
        case OpKind::MlpDownBias:
            return "mlp down bias";
        case OpKind::FinalLayerNorm:
            return "final layernorm";
        case OpKind::kCount:
            break;
    }
    return "?";
}

OpCount count_op(OpKind k, const ModelConfig& c, int rows, int pos0) {
    const int d = c.dim, kv = c.kv_dim(), h = c.hidden_dim, H = c.n_heads, V = c.vocab_size;
    const double T = rows;
    // Keys seen by all query rows: sum over t of (pos0 + t + 1).
    const double keys = T * pos0 + T * (T + 1) / 2;
    const int wide = H * (pos0 + rows);  // scores of the last row, every head
    OpCount o;
    auto set = [&](int in, int out, double flops) {
        o.in = {rows, in};
        o.out = {rows, out};
        o.flops = flops;
    };
    switch (k) {
        case OpKind::Embedding:
        case OpKind::PosEmbedding:
            set(1, d, 0);
            break;
        case OpKind::PosAdd:
        case OpKind::OutBias:
        case OpKind::MlpDownBias:
            set(d, d, T * d);
            break;
        case OpKind::LayerNorm:
        case OpKind::FfnLayerNorm:
        case OpKind::FinalLayerNorm:
            set(d, d, 8 * T * d);
            break;
        case OpKind::MlpUp:
            set(d, h, 2 * T * d * h);
            o.matmul = true;
            break;
        case OpKind::MlpUpBias:
            set(h, h, T * h);
            break;
        case OpKind::Gelu:
            set(h, h, 8 * T * h);
            break;
        case OpKind::MlpDown:
            set(h, d, 2 * T * h * d);
            o.matmul = true;
            break;
        case OpKind::RmsNorm:
        case OpKind::FfnNorm:
        case OpKind::FinalNorm:
            set(d, d, 4 * T * d);
            break;
        case OpKind::QProj:
        case OpKind::OutProj:
            set(d, d, 2 * T * d * d);
            o.matmul = true;
            break;
        case OpKind::KProj:
        case OpKind::VProj:
            set(d, kv, 2 * T * d * kv);
            o.matmul = true;
            break;
        case OpKind::QBias:
            set(d, d, T * d);
            break;
        case OpKind::KBias:
        case OpKind::VBias:
            set(kv, kv, T * kv);
            break;
        case OpKind::Rope:
            set(d + kv, d + kv, 3 * T * (d + kv));
            break;
        case OpKind::KvAppend:
            set(2 * kv, 2 * kv, 0);
            break;
        case OpKind::Scores:
            set(d, wide, 2.0 * d * keys);
            o.attention = true;
            break;
        case OpKind::Softmax:
            set(wide, wide, 5.0 * H * keys);
            break;
        case OpKind::WeightedSum:
            set(wide, d, 2.0 * d * keys);
            o.attention = true;
            break;
        case OpKind::Residual:
        case OpKind::FfnResidual:
            set(d, d, T * d);
            break;
        case OpKind::FfnGate:
        case OpKind::FfnUp:
            set(d, h, 2 * T * d * h);
            o.matmul = true;
            break;
        case OpKind::SwiGLU:
            set(h, h, 6 * T * h);
            break;
        case OpKind::FfnDown:
            set(h, d, 2 * T * h * d);
            o.matmul = true;
            break;
        case OpKind::Classifier:
            set(d, V, 2 * T * d * V);
            o.matmul = true;
            break;
        case OpKind::Sampling:
            set(V, 1, 0);
            break;
        case OpKind::kCount:
            break;
    }
    return o;
}

std::vector<OpKind> layer_ops(const ModelConfig& c) {
    using K = OpKind;
    if (c.gpt2())
        return {K::LayerNorm,   K::QProj,     K::QBias,    K::KProj,    K::KBias,
                K::VProj,       K::VBias,     K::KvAppend, K::Scores,   K::Softmax,
                K::WeightedSum, K::OutProj,   K::OutBias,  K::Residual, K::FfnLayerNorm,
                K::MlpUp,       K::MlpUpBias, K::Gelu,     K::MlpDown,  K::MlpDownBias,
                K::FfnResidual};
    std::vector<OpKind> ops{K::RmsNorm, K::QProj, K::KProj, K::VProj};
    if (c.qkv_bias) ops.insert(ops.end(), {K::QBias, K::KBias, K::VBias});
    ops.insert(ops.end(), {K::Rope, K::KvAppend, K::Scores, K::Softmax, K::WeightedSum, K::OutProj,
                           K::Residual, K::FfnNorm, K::FfnGate, K::FfnUp, K::SwiGLU, K::FfnDown,
                           K::FfnResidual});
    return ops;
}

double weight_bytes(const ModelConfig& c, double bytes_per_value) {
    return bytes_per_value * static_cast<double>(c.parameter_count());
}

StepCounts count_llama_forward(const ModelConfig& c, int pos0, int T, double bytes_per_value) {
    StepCounts s;
    auto add = [&](OpKind k, int rows, double times) {
        const OpCount o = count_op(k, c, rows, pos0);
        s.flops += times * o.flops;
        if (o.matmul) s.matmul_flops += times * o.flops;
        if (o.attention) s.attention_flops += times * o.flops;
    };
    if (c.gpt2()) add(OpKind::PosAdd, T, 1);
    for (OpKind kind : layer_ops(c)) add(kind, T, c.n_layers);
    add(c.gpt2() ? OpKind::FinalLayerNorm : OpKind::FinalNorm, 1, 1);  // the last row only
    add(OpKind::Classifier, 1, 1);
    const double L = c.n_layers, kv = c.kv_dim();
    const double kv_read = bytes_per_value * L * 2 * kv * (pos0 + T);
    const double kv_written = bytes_per_value * L * 2 * kv * T;
    s.weight_bytes = weight_bytes(c, bytes_per_value);
    s.kv_read_bytes = kv_read;
    s.kv_write_bytes = kv_written;
    s.bytes = s.weight_bytes + kv_read + kv_written;
    return s;
}

double kv_reads_pass_weights_at(const StepCounts& counts, const ModelConfig& c) {
    const double per_token = double(c.kv_bytes_per_token(4));
    return per_token > 0 ? std::ceil(counts.weight_bytes / per_token) : 0;
}

StepCounts count_unmasked_pairs(const ModelConfig& c, int T) {
    StepCounts s;
    const double pairs = 0.5 * double(T) * (T - 1), L = c.n_layers, d = c.dim;
    s.attention_flops = L * 4 * d * pairs;
    s.flops = s.attention_flops + L * 5.0 * c.n_heads * pairs;
    return s;
}

}  // namespace kvs
