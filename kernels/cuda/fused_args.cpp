#include "kernels/cuda/fused_args.h"

#include "core/files/gguf_file.h"

namespace kvs::kern {

int weight_kind(GgmlType t) {
    switch (t) {
        case GgmlType::F32:
            return kWeightF32;
        case GgmlType::F16:
            return kWeightF16;
        case GgmlType::BF16:
            return kWeightBF16;
        default:
            return -1;
    }
}

MatrixRef matrix_ref(const FusedMatrix& m) {
    if (m.bytes) return {m.bytes, weight_kind(m.type)};
    return {m.floats.data};
}

FusedQkvArgs fused_qkv_args(const FusedOps::NormQkv& a, const FusedPlaces& at) {
    const auto opt = [](DeviceSpan s) { return s.empty() ? nullptr : s.data; };
    FusedQkvArgs k{};
    k.x = a.x.data;
    k.embed = opt(a.embed);
    k.token = at.token;
    k.norm = a.norm.data;
    k.wq = matrix_ref(a.wq);
    k.wk = matrix_ref(a.wk);
    k.wv = matrix_ref(a.wv);
    k.bq = opt(a.bq);
    k.bk = opt(a.bk);
    k.bv = opt(a.bv);
    k.inv_freq = a.inv_freq.data;
    k.q = a.q.data;
    k.cache_k = a.cache_k.data;
    k.cache_v = a.cache_v.data;
    k.q_keep = opt(a.q_keep);
    k.k_keep = opt(a.k_keep);
    k.v_keep = opt(a.v_keep);
    k.dim = a.dim, k.kv_dim = a.kv_dim, k.head_dim = a.head_dim;
    k.eps = a.eps;
    k.pos0 = a.pos;
    k.pos_at = at.pos_at;
    return k;
}

FusedAttentionArgs fused_attention_args(const FusedOps::Attend& a, const FusedPlaces& at) {
    FusedAttentionArgs f{};
    AttentionArgs& t = f.att;
    t.out = a.out.data;
    t.q = a.q.data;
    t.cache_k = a.cache_k.data;
    t.cache_v = a.cache_v.data;
    t.probs = a.probs.empty() ? nullptr : a.probs.data;
    t.T = 1;
    t.pos0 = a.pos;
    t.n_heads = a.n_heads, t.n_kv_heads = a.n_kv_heads, t.head_dim = a.head_dim;
    t.partial = at.partial;
    t.pos_at = at.pos_at;
    t.probs_stride = a.probs.empty() ? 0 : static_cast<int>(a.probs.size / a.n_heads);
    f.tickets = at.tickets;
    f.out_keep = a.out_keep.empty() ? nullptr : a.out_keep.data;
    return f;
}

LaunchShape fused_attention_launch(const FusedOps::Attend& a, const FusedPlaces& at) {
    const int keys = at.pos_at ? at.max_keys : a.pos + 1;
    return fused_attention_shape(keys, a.n_heads, a.n_kv_heads, a.head_dim);
}

}  // namespace kvs::kern
