#include "core/model/llama_weights.h"

namespace kvs {

void point_llama_weights(LlamaWeights& w, const float* p, const ModelConfig& c,
                         bool with_freq_cis) {
    w = LlamaWeights{};  // every view pointed anew (callers set the owner after)
    // llama2.c's freq_cis block (never in a GPT-2 copy): stored but unused, RoPE computes them.
    const std::size_t freq =
        c.gpt2() ? 0 : 2 * static_cast<std::size_t>(c.seq_len) * (c.head_dim() / 2);
    w.all = std::span<const float>(p, c.stored_floats() - (with_freq_cis ? 0 : freq));
    const std::size_t d = c.dim, hd = c.hidden_dim, L = c.n_layers, V = c.vocab_size,
                      kv = c.kv_dim();
    auto take = [&p](std::size_t n) {
        const float* at = p;
        p += n;
        return at;
    };
    w.token_embedding = take(V * d);
    if (c.gpt2()) {
        w.pos_embedding = take(std::size_t(c.n_positions) * d);
        w.norm_att = take(L * d);
        w.norm_att_bias = take(L * d);
        w.wq = take(L * d * d);
        w.wk = take(L * kv * d);
        w.wv = take(L * kv * d);
        w.bq = take(L * d);
        w.bk = take(L * kv);
        w.bv = take(L * kv);
        w.wo = take(L * d * d);
        w.bo = take(L * d);
        w.norm_ffn = take(L * d);
        w.norm_ffn_bias = take(L * d);
        w.w1 = take(L * hd * d);
        w.b1 = take(L * hd);
        w.w2 = take(L * d * hd);
        w.b2 = take(L * d);
        w.norm_final = take(d);
        w.norm_final_bias = take(d);
        w.wcls = c.shared_classifier ? w.token_embedding : take(V * d);
        return;
    }
    w.norm_att = take(L * d);
    w.wq = take(L * d * d);
    w.wk = take(L * kv * d);
    w.wv = take(L * kv * d);
    w.wo = take(L * d * d);
    w.norm_ffn = take(L * d);
    w.w1 = take(L * hd * d);
    w.w2 = take(L * d * hd);
    w.w3 = take(L * hd * d);
    w.norm_final = take(d);
    if (with_freq_cis) take(freq);  // unused: RoPE computes its angles
    w.wcls = c.shared_classifier ? w.token_embedding : take(V * d);
    if (c.qkv_bias) {
        w.bq = take(L * d);
        w.bk = take(L * kv);
        w.bv = take(L * kv);
    }
}

}  // namespace kvs
