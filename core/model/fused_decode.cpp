#include "core/model/fused_decode.h"

#include "core/model/kv_rows.h"

namespace kvs {

void run_fused_decode(FusedOps& f, const FusedDecodeStep& s) {
    const ModelConfig& c = s.c;
    const LlamaWeights& W = s.W;
    const int D = c.dim, KV = c.kv_dim(), HID = c.hidden_dim, H = c.n_heads;
    const std::size_t d = D, kv = KV;
    // The op strip: the ops of each kernel, the first one the kernel's call, the others in it.
    const char* kernel = nullptr;
    auto op = [&](OpKind k, int layer, const char* starts = nullptr) {
        if (starts) kernel = starts;
        if (s.log) s.log->add(k, c, layer, 1, s.pos, starts != nullptr, kernel);
    };
    auto keep = [](DeviceSpan span, std::size_t at, std::size_t n) {
        return span.empty() ? DeviceSpan{} : span.at(at, n);
    };
    const ConstKvRows kept_rows{nullptr, c.n_layers, 1, KV};  // s.kv_keep: [L, 2, 1, kv_dim]

    for (int l = 0; l < c.n_layers; ++l) {
        // 1. [x = embedding row (layer 0)]; xb = rmsnorm(x); q, k, v = xb wq, wk, wv (+ biases);
        //    RoPE at pos; cache row pos = k, v.   q: [dim]; k, v: [kv_dim]
        FusedOps::NormQkv a;
        a.x = s.x;
        if (l == 0) {
            op(OpKind::Embedding, -1, fused_kernel_name("norm_qkv"));
            a.embed = s.vec(W.token_embedding, std::size_t(c.vocab_size) * d);
            a.token = s.token;
        }
        op(OpKind::RmsNorm, l, l == 0 ? nullptr : fused_kernel_name("norm_qkv"));
        op(OpKind::QProj, l);
        op(OpKind::KProj, l);
        op(OpKind::VProj, l);
        a.norm = s.vec(W.norm_att + l * d, d);
        a.wq = s.matrix(MatrixKind::wq, l);
        a.wk = s.matrix(MatrixKind::wk, l);
        a.wv = s.matrix(MatrixKind::wv, l);
        if (c.qkv_bias) {  // Qwen2
            op(OpKind::QBias, l);
            op(OpKind::KBias, l);
            op(OpKind::VBias, l);
            a.bq = s.vec(W.bq + l * d, d);
            a.bk = s.vec(W.bk + l * kv, kv);
            a.bv = s.vec(W.bv + l * kv, kv);
        }
        op(OpKind::Rope, l);
        op(OpKind::KvAppend, l);
        a.inv_freq = s.inv_freq;
        a.q = s.q;
        a.cache_k = s.cache.k(l);
        a.cache_v = s.cache.v(l);
        a.q_keep = keep(s.q_keep, l * d, d);
        a.k_keep = keep(s.kv_keep, kept_rows.offset(l, kept_rows.K), kv);
        a.v_keep = keep(s.kv_keep, kept_rows.offset(l, kept_rows.V), kv);
        a.pos = s.pos;
        a.dim = D, a.kv_dim = KV, a.head_dim = c.head_dim(), a.eps = c.norm_eps;
        f.norm_qkv(a);

        // 2. att = softmax(q K^T / sqrt(head_dim)) V over the pos + 1 cached keys: [dim]
        op(OpKind::Scores, l, fused_kernel_name("attention"));
        op(OpKind::Softmax, l);
        op(OpKind::WeightedSum, l);
        FusedOps::Attend t;
        t.out = s.att;
        t.q = s.q;
        t.cache_k = s.cache.k(l);
        t.cache_v = s.cache.v(l);
        t.probs = keep(s.probs, l * H * s.probs_stride, H * s.probs_stride);
        t.out_keep = keep(s.out_keep, l * d, d);
        t.pos = s.pos;
        t.n_heads = H, t.n_kv_heads = c.n_kv_heads, t.head_dim = c.head_dim();
        f.attention(t);

        // 3. x += att wo
        op(OpKind::OutProj, l, fused_kernel_name("matvec_add"));
        op(OpKind::Residual, l);
        f.matvec_add(s.x, s.att, s.matrix(MatrixKind::wo, l), D, D);

        // 4. h = silu(xb w1) * (xb w3), xb = rmsnorm(x): [hidden]
        op(OpKind::FfnNorm, l, fused_kernel_name("norm_gate_up"));
        op(OpKind::FfnGate, l);
        op(OpKind::FfnUp, l);
        op(OpKind::SwiGLU, l);
        f.norm_gate_up(s.h, s.x, s.vec(W.norm_ffn + l * d, d), s.matrix(MatrixKind::w1, l),
                       s.matrix(MatrixKind::w3, l), D, HID, c.norm_eps);

        // 5. x += h w2
        op(OpKind::FfnDown, l, fused_kernel_name("matvec_add"));
        op(OpKind::FfnResidual, l);
        f.matvec_add(s.x, s.h, s.matrix(MatrixKind::w2, l), HID, D);
    }
    // logits = rmsnorm(x) wcls: [vocab]
    op(OpKind::FinalNorm, -1, fused_kernel_name("norm_logits"));
    op(OpKind::Classifier, -1);
    f.norm_logits(s.logits, s.x, s.vec(W.norm_final, d), s.matrix(MatrixKind::wcls, 0), D,
                  c.vocab_size, c.norm_eps);
}

}  // namespace kvs
