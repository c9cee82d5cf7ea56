// The forward pass over Backend ops: a pass planned, every row through every layer, each
// sequence's attention as run.c's (RoPE, the cache append, attention over what it holds).
#include "core/model/transformer_runner.h"

namespace kvs {

TransformerRunner::TransformerRunner(const TransformerModel& m, Backend& be, int slots,
                                     const KvBlockPool* pool)
    : model_(m),
      config_(m.config()),
      be_(be),
      float_weights_(&m.weights()),
      paged_(pool != nullptr) {
    // Compact matrices (and a compact embedding table) are read by the backend where it keeps
    // them: the CPU in host memory, where they lie; a GPU in its own copy (adopt_compact). A
    // backend that does not read their types gets them expanded into float32 instead: the
    // same values.
    const CompactWeights& cw = m.compact();
    compact_ = cw.held();
    for (const CompactMatrix& cm : cw.all()) compact_ = compact_ && be.runs_compact(cm.type);
    if (cw.embedding.data) compact_ = compact_ && be.runs_compact(cw.embedding.type);
    if (cw.held() && !compact_) expand(m);
    if (compact_) adopt_compact(cw);
    // The CPU computes on the model's (mapped) floats; other backends copy them once.
    weights_ = DeviceBuffer::adopt(be, float_weights_->all.data(), float_weights_->all.size());
    // RoPE's frequencies, worked out once for the model's base and scaling: [head_dim / 2]
    if (!config_.gpt2()) {  // GPT-2 learns its positions instead
        const std::vector<float> inv_freq = rope_inverse_frequencies(config_);
        inv_freq_ = DeviceBuffer(be, inv_freq.size());
        be.upload(inv_freq_.span(), inv_freq.data(), inv_freq.size());
    }
    for (int i = 0; i < slots; ++i)
        caches_.push_back(pool ? std::make_unique<KvCache>(*pool, config_.n_layers, config_.seq_len,
                                                           config_.n_kv_heads, config_.head_dim())
                               : std::make_unique<KvCache>(be, config_.n_layers, config_.seq_len,
                                                           config_.n_kv_heads, config_.head_dim()));
    // A serving runner's scratch comes with its pool, before the first pass: a whole
    // context's rows, written once so its memory is mapped (a run's passes are timed, its
    // setup is not).
    if (pool) {
        ensure_scratch(config_.seq_len, 0, std::size_t(slots) * config_.vocab_size);
        for (DeviceBuffer* b : {&x_, &xb_, &q_, &k_, &v_, &att_, &h1_, &h3_, &captures_}) {
            const std::vector<float> zeros(b->size(), 0.0f);
            if (b->size() > 0) be.upload(b->span(), zeros.data(), zeros.size());
        }
    }
    be.synchronize();
}

TransformerRunner::~TransformerRunner() {
    if (graph_ != 0) be_.graphs()->drop(graph_);
    for (const unsigned char* p : adopted_) be_.release_compact(p);
}

void TransformerRunner::ensure_scratch(int rows, std::size_t probs_floats,
                                       std::size_t capture_floats) {
    const std::size_t d = config_.dim, kv = config_.kv_dim(), h = config_.hidden_dim;
    if (rows > scratch_rows_) {
        // Sized once for a whole context (a batch of several sequences may need more).
        rows = std::max(rows, config_.seq_len);
        scratch_rows_ = rows;
        x_ = DeviceBuffer(be_, rows * d);
        xb_ = DeviceBuffer(be_, rows * d);
        q_ = DeviceBuffer(be_, rows * d);
        k_ = DeviceBuffer(be_, rows * kv);
        v_ = DeviceBuffer(be_, rows * kv);
        att_ = DeviceBuffer(be_, rows * d);
        h1_ = DeviceBuffer(be_, rows * h);
        if (!config_.gpt2()) h3_ = DeviceBuffer(be_, rows * h);  // SwiGLU's up projection
    }
    if (probs_floats > probs_.size())
        probs_ = DeviceBuffer(be_, grown(probs_.size(), probs_floats));
    if (capture_floats > captures_.size())
        captures_ = DeviceBuffer(be_, grown(captures_.size(), capture_floats));
    host_.reserve(be_, captures_.size());
}

void TransformerRunner::forward_batch(std::span<const SeqInput> seqs, const Capture& want,
                                      std::span<ForwardResult> out) {
    const int B = static_cast<int>(seqs.size());
    if (B == 0 || B > max_batch() || static_cast<int>(out.size()) < B)
        throw Error("forward pass with " + std::to_string(B) + " sequences (runner holds " +
                    std::to_string(max_batch()) + ")");
    const Pass p = plan(seqs, want);
    ensure_scratch(p.R, p.probs_floats, p.captures.total);
    for (int i = 0; i < B; ++i) {
        out[i].head_outputs.clear();
        out[i].ops.clear();
        if (want.attention)
            out[i].attention.resize(config_.n_layers, config_.n_heads, p.keep[i],
                                    p.pos0[i] + p.T[i] - p.keep[i],
                                    mask_ == AttentionMask::Bidirectional);
        if (!want.vectors) {
            out[i].q_rows.clear();
            out[i].attn_out.clear();
        }
    }
    log_ = want.op_log ? &out[0].ops : nullptr;
    if (log_) log_->clear();
    log_seq_.clear();
    if (p.graph)
        run_graph(seqs, p, want);
    else if (p.fused)
        run_fused(seqs, p, want);
    else if (config_.gpt2())
        run_gpt2_layers(seqs, p, want);
    else
        run_layers(seqs, p, want);
    finish(seqs, p, want, out);
    const PassPath path = p.fused ? PassPath::Fused : p.graph ? PassPath::Graph : PassPath::PerOp;
    for (int i = 0; i < B; ++i) out[i].path = path;
}

TransformerRunner::Pass TransformerRunner::plan(std::span<const SeqInput> seqs,
                                                const Capture& want) {
    Pass p;
    p.B = static_cast<int>(seqs.size());
    p.first.resize(p.B), p.T.resize(p.B), p.pos0.resize(p.B), p.keep.resize(p.B);
    p.kv_keep.resize(p.B);
    all_tokens_.clear();
    all_positions_.clear();
    for (int i = 0; i < p.B; ++i) {
        const SeqInput& s = seqs[i];
        if (s.slot < 0 || s.slot >= max_batch())
            throw Error("no KV cache slot " + std::to_string(s.slot));
        for (int j = 0; j < i; ++j)
            if (seqs[j].slot == s.slot) throw Error("two sequences share a KV cache slot");
        const int T = static_cast<int>(s.tokens.size()), pos0 = caches_[s.slot]->len();
        if (T == 0) throw Error("forward pass with no tokens");
        // A bounded paged cache sees at most its sinks, its window and the pass: its positions
        // may run past the context where they are RoPE's (computed for any position).
        const bool unbounded = paged_ && window_ > 0 && !config_.gpt2() && T <= config_.seq_len;
        if (pos0 + T > config_.seq_len && !unbounded)
            throw Error("context is full: " + std::to_string(pos0 + T) +
                        " positions needed, the model's context is " +
                        std::to_string(config_.seq_len));
        const KvCache& cache = *caches_[s.slot];
        if (window_ > 0 && want.attention)
            throw Error("attention weights are not captured under a cache window");
        if (cache.paged() &&
            std::size_t(pos0 + T) > cache.table().size() * cache.pool()->block_size())
            throw Error("slot " + std::to_string(s.slot) + "'s block table holds " +
                        std::to_string(cache.table().size()) + " blocks, too few for " +
                        std::to_string(pos0 + T) + " rows");
        for (int t : s.tokens)
            if (t < 0 || t >= config_.vocab_size)
                throw Error("token id " + std::to_string(t) + " is outside the vocabulary (" +
                            std::to_string(config_.vocab_size) + ")");
        p.T[i] = T;
        p.pos0[i] = pos0;
        p.first[i] = p.R;
        p.R += T;
        p.keep[i] = want.last_rows < 0 ? T : std::min(want.last_rows, T);
        p.kv_keep[i] = want.all_kv_rows ? T : p.keep[i];
        if (want.attention && p.keep[i] < T)
            p.probs_floats =
                std::max(p.probs_floats, std::size_t(config_.n_heads) * T * (pos0 + T));
        all_tokens_.insert(all_tokens_.end(), s.tokens.begin(), s.tokens.end());
        for (int t = 0; t < T; ++t) all_positions_.push_back(pos0 + t);
    }
    const StepGraphs* graphs = be_.graphs();
    // Op by op, each op timed: the teaching path. Otherwise a decode step (one row a sequence)
    // runs through the fused kernels (one sequence) and/or as one graph. Not for GPT-2: a
    // recorded step reads its token from the device, and its position row would have to be read
    // the same way (not done: GPT-2 decodes op by op). Causal attention only (a decode row sees
    // every key either way, but a bidirectional session runs uncached, never one row).
    const bool per_op = want.op_log && want.time_each_op;
    // A paged pass runs op by op: its rows move through block tables a recording cannot follow.
    p.graph = graphs && graphs->graphs_on() && !per_op && p.B <= StepGraphs::kMaxSequences &&
              p.R == p.B && !config_.gpt2() && mask_ == AttentionMask::Causal && !paged_;
    p.fused = !per_op && want.fused && p.B == 1 && p.R == 1 && fused_fits() &&
              mask_ == AttentionMask::Causal && !paged_;
    p.capacity = config_.seq_len;
    // The capture buffer: [logits: B x vocab | per sequence: attention, q, attention output, K/V
    // rows].
    const std::size_t L = config_.n_layers, H = config_.n_heads, d = config_.dim,
                      kv = config_.kv_dim();
    CaptureLayout& st = p.captures;
    st.total = p.B * std::size_t(config_.vocab_size);
    st.projections = want.projections && !p.fused;
    for (int i = 0; i < p.B; ++i) {
        st.probs.push_back(st.total);
        if (want.attention) st.total += L * H * p.keep[i] * p.probs_row(i);
        st.q.push_back(st.total);
        if (want.vectors) st.total += L * p.keep[i] * d;
        st.attn_out.push_back(st.total);
        if (want.vectors) st.total += L * p.keep[i] * d;
        st.kv.push_back(st.total);
        if (want.kv_rows) st.total += ConstKvRows{nullptr, int(L), p.kv_keep[i], int(kv)}.size();
        st.proj.push_back(st.total);
        if (st.projections)
            st.total += ConstProjectionRows{nullptr, int(L), p.keep[i], int(d), int(kv)}.size();
    }
    return p;
}

void TransformerRunner::run_layers(std::span<const SeqInput> seqs, const Pass& p,
                                   const Capture& want) {
    using K = OpKind;
    const int R = p.R, D = config_.dim, KV = config_.kv_dim(), HID = config_.hidden_dim, B = p.B;
    const std::size_t d = D, kv = KV, hid = HID, vocab = config_.vocab_size;
    const LlamaWeights& W = *float_weights_;
    const CompactWeights& C = device_compact_;
    // The pass's scratch rows: x, xb, q, att: [R, dim]; k, v: [R, kv_dim]; h1, h3: [R, hidden]
    const DeviceSpan x = x_.span(), xb = xb_.span(), q = q_.span(), k = k_.span(), v = v_.span(),
                     att = att_.span(), h1 = h1_.span(), h3 = h3_.span();

    embed(R);  // x: [R, dim], the residual stream of every row in this pass (one row per token)
    for (int l = 0; l < config_.n_layers; ++l) {
        // Attention block. xb = rmsnorm(x): [R, dim]
        rmsnorm({K::RmsNorm, l}, xb, x, W.norm_att + l * d, R);
        // q = xb wq: [R, dim] (n_heads x head_dim); k, v: [R, kv_dim] (n_kv_heads x head_dim)
        matmul({K::QProj, l}, q, xb, W.wq + l * d * d, at(C.wq, l), R, D, D);
        matmul({K::KProj, l}, k, xb, W.wk + l * kv * d, at(C.wk, l), R, D, KV);
        matmul({K::VProj, l}, v, xb, W.wv + l * kv * d, at(C.wv, l), R, D, KV);
        if (config_.qkv_bias) {  // Qwen2: q += bq, k += bk, v += bv, every row
            add_bias({K::QBias, l}, q, W.bq + l * d, R, D);
            add_bias({K::KBias, l}, k, W.bk + l * kv, R, KV);
            add_bias({K::VBias, l}, v, W.bv + l * kv, R, KV);
        }
        // RoPE, the cache append and attention, per sequence: att: [R, dim]
        attend_all(l, seqs, p, want);
        // x += att wo: [R, dim]
        matmul({K::OutProj, l}, xb, att, W.wo + l * d * d, at(C.wo, l), R, D, D);
        add({K::Residual, l}, x, xb, R);

        // Feed-forward block: x += w2(silu(w1 xb) * w3 xb); h1, h3: [R, hidden]
        rmsnorm({K::FfnNorm, l}, xb, x, W.norm_ffn + l * d, R);
        matmul({K::FfnGate, l}, h1, xb, W.w1 + l * hid * d, at(C.w1, l), R, D, HID);
        matmul({K::FfnUp, l}, h3, xb, W.w3 + l * hid * d, at(C.w3, l), R, D, HID);
        swiglu({K::SwiGLU, l}, h1, h3, R);
        matmul({K::FfnDown, l}, xb, h1, W.w2 + l * d * hid, at(C.w2, l), R, HID, D);
        add({K::FfnResidual, l}, x, xb, R);
    }
    // Only each sequence's last position needs a next-token distribution: those B rows are
    // normalised into xb[0..B) and go through the classifier together. logits: [B, vocab]
    for (int i = 0; i < B; ++i)
        rmsnorm({K::FinalNorm, -1}, xb_.at(i * d, d), x_.at((p.first[i] + p.T[i] - 1) * d, d),
                W.norm_final, 1);
    matmul({K::Classifier, -1}, captures_.at(0, B * vocab), xb_.at(0, B * d), W.wcls, C.wcls, B, D,
           config_.vocab_size);
}

void TransformerRunner::run_gpt2_layers(std::span<const SeqInput> seqs, const Pass& p,
                                        const Capture& want) {
    using K = OpKind;
    const int R = p.R, D = config_.dim, HID = config_.hidden_dim, B = p.B;
    const std::size_t d = D, hid = HID, vocab = config_.vocab_size;
    const LlamaWeights& W = *float_weights_;
    // The pass's scratch rows: x, xb, q, k, v, att: [R, dim]; h1: [R, hidden]
    const DeviceSpan x = x_.span(), xb = xb_.span(), q = q_.span(), k = k_.span(), v = v_.span(),
                     att = att_.span(), h1 = h1_.span();
    // The dense layers of GPT-2: out = in W^T + b, every row.   in: [R, n], out: [R, m]
    auto linear = [&](At at, K bias, DeviceSpan out, DeviceSpan in, const float* wt, const float* b,
                      int n, int m) {
        matmul(at, out, in, wt, CompactMatrix{}, R, n, m);
        add_bias({bias, at.layer}, out, b, R, m);
    };

    // x = wte[token] + wpe[position]: [R, dim]; the position is in x from here on (no RoPE).
    lookup({K::Embedding, -1}, x, W.token_embedding, config_.vocab_size, all_tokens_.data(), R);
    lookup({K::PosEmbedding, -1}, xb, W.pos_embedding, config_.n_positions, all_positions_.data(),
           R);
    add({K::PosAdd, -1}, x, xb, R);
    for (int l = 0; l < config_.n_layers; ++l) {
        // Attention block. xb = layernorm(x) (ln_1): [R, dim]
        layernorm({K::LayerNorm, l}, xb, x, W.norm_att + l * d, W.norm_att_bias + l * d, R);
        // q, k, v = xb wq + bq, ...: [R, dim] each (c_attn, split into three on load)
        linear({K::QProj, l}, K::QBias, q, xb, W.wq + l * d * d, W.bq + l * d, D, D);
        linear({K::KProj, l}, K::KBias, k, xb, W.wk + l * d * d, W.bk + l * d, D, D);
        linear({K::VProj, l}, K::VBias, v, xb, W.wv + l * d * d, W.bv + l * d, D, D);
        // The cache append and attention, per sequence (no RoPE): att: [R, dim]
        attend_all(l, seqs, p, want);
        // x += att wo + bo (attn.c_proj): [R, dim]
        linear({K::OutProj, l}, K::OutBias, xb, att, W.wo + l * d * d, W.bo + l * d, D, D);
        add({K::Residual, l}, x, xb, R);

        // MLP block: x += gelu(layernorm(x) w1 + b1) w2 + b2; h1: [R, hidden]
        layernorm({K::FfnLayerNorm, l}, xb, x, W.norm_ffn + l * d, W.norm_ffn_bias + l * d, R);
        linear({K::MlpUp, l}, K::MlpUpBias, h1, xb, W.w1 + l * hid * d, W.b1 + l * hid, D, HID);
        gelu({K::Gelu, l}, h1, R);
        linear({K::MlpDown, l}, K::MlpDownBias, xb, h1, W.w2 + l * d * hid, W.b2 + l * d, HID, D);
        add({K::FfnResidual, l}, x, xb, R);
    }
    // Each sequence's last row, layernorm(x) (ln_f), then the classifier together. [B, vocab]
    for (int i = 0; i < B; ++i)
        layernorm({K::FinalLayerNorm, -1}, xb_.at(i * d, d),
                  x_.at((p.first[i] + p.T[i] - 1) * d, d), W.norm_final, W.norm_final_bias, 1);
    matmul({K::Classifier, -1}, captures_.at(0, B * vocab), xb_.at(0, B * d), W.wcls,
           CompactMatrix{}, B, D, config_.vocab_size);
}

TransformerRunner::SeqRows TransformerRunner::rows_of(const Pass& p, int i) const {
    const std::size_t d = config_.dim, kv = config_.kv_dim(), first = p.first[i], T = p.T[i];
    return {q_.at(first * d, T * d), k_.at(first * kv, T * kv), v_.at(first * kv, T * kv),
            att_.at(first * d, T * d)};
}

void TransformerRunner::rope_rows(int l, const Pass& p, int i, const SeqRows& r) {
    capture_projections(l, p, i, false);
    if (!config_.gpt2()) {  // GPT-2's positions were added to x at the embedding instead
        op(OpKind::Rope, l, p.T[i], p.pos0[i]);
        be_.rope(r.q, r.k, p.T[i], p.pos0[i], config_.dim, config_.kv_dim(), config_.head_dim(),
                 inv_freq_.span());
    }
    capture_projections(l, p, i, true);
}

void TransformerRunner::attend(int l, KvCache& cache, const Pass& p, int i, const Capture& want) {
    const CountedAt counted(op_seq_, i);
    const int T = p.T[i], pos0 = p.pos0[i];
    const SeqRows r = rows_of(p, i);  // at positions pos0..pos0+T-1
    // Under a graph capture the next ops read this sequence's position from the device; the
    // recording serves up to probs_row(i) keys.
    if (p.graph) be_.graphs()->position_of(i, static_cast<int>(p.probs_row(i)));
    rope_rows(l, p, i, r);
    // The cache grows by T rows; attention then reads rows 0..pos0+T-1 of it.
    op(OpKind::KvAppend, l, T, pos0);
    be_.kv_append(cache.k(l), cache.v(l), r.k, r.v, pos0, T, config_.kv_dim());
    // (finish() reads the kept rows out of the cache, at a position-dependent place a recorded
    // copy cannot follow: a graph keeps them here.)
    if (p.graph) keep_new_kv(l, p, i, want, r);
    // One fused kernel: scores, softmax and weights . V share its measured time.
    op(OpKind::Scores, l, T, pos0);
    op(OpKind::Softmax, l, T, pos0, false);
    op(OpKind::WeightedSum, l, T, pos0, false);
    be_.attention(r.att, r.q, cache.k(l), cache.v(l), probs_target(l, p, i, want), T, pos0,
                  config_.n_heads, config_.n_kv_heads, config_.head_dim(),
                  mask_ == AttentionMask::Causal);
    keep_attention(l, p, i, want, r);
}

}  // namespace kvs
