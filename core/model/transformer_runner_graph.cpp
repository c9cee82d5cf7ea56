// A decode step as one recorded graph, replayed per token, or through the backend's fused kernels.
#include "core/model/transformer_runner.h"

namespace kvs {

void TransformerRunner::run_graph(std::span<const SeqInput> seqs, const Pass& p,
                                  const Capture& want) {
    StepGraphs& g = *be_.graphs();
    g.set_step(all_tokens_.data(), p.pos0.data(), p.B);
    std::vector<std::size_t> key{
        std::size_t(p.B), want.attention,
        want.vectors,     want.kv_rows,
        want.projections, want.op_log,
        p.fused,          reinterpret_cast<std::size_t>(captures_.span().data),
        captures_.size(), reinterpret_cast<std::size_t>(x_.span().data),
        p.captures.total};
    for (int i = 0; i < p.B; ++i)
        key.insert(key.end(), {std::size_t(seqs[i].slot), std::size_t(p.keep[i]),
                               std::size_t(p.kv_keep[i]), p.probs_row(i)});
    if (graph_ != 0 && key == graph_key_ && g.replay(graph_)) {
        replay_log(p);
        return;
    }
    if (graph_ != 0) g.drop(graph_);
    graph_ = 0;
    g.begin_capture();
    try {
        if (p.fused)
            run_fused(seqs, p, want);
        else
            run_layers(seqs, p, want);
    } catch (...) {
        g.abort_capture();
        throw;
    }
    graph_ = g.end_capture();
    graph_key_ = std::move(key);
    if (log_) {
        graph_log_ = *log_;
        graph_log_seq_ = log_seq_;
    }
    if (!g.replay(graph_)) throw Error("a decode graph just recorded could not be launched");
}

void TransformerRunner::replay_log(const Pass& p) {
    if (!log_) return;
    *log_ = graph_log_;
    for (std::size_t k = 0; k < log_->ops.size(); ++k) {
        const int i = graph_log_seq_[k];
        if (i < 0) continue;
        OpRecord& r = log_->ops[k];
        const OpCount n = count_op(r.kind, config_, r.in.rows, p.pos0[i]);
        r.in = n.in, r.out = n.out, r.flops = n.flops;
    }
}

void TransformerRunner::run_fused(std::span<const SeqInput> seqs, const Pass& p,
                                  const Capture& want) {
    const std::size_t d = config_.dim, L = config_.n_layers, H = config_.n_heads,
                      kv = config_.kv_dim();
    const CaptureLayout& st = p.captures;
    const std::size_t stride = p.probs_row(0);
    if (p.graph) be_.graphs()->position_of(0, static_cast<int>(stride));
    FusedDecodeStep s{config_,
                      *float_weights_,
                      [&](const float* host, std::size_t n) { return w(host, n); },
                      [&](MatrixKind kind, int l) { return fused_matrix(kind, l); },
                      *caches_[seqs[0].slot],
                      inv_freq_.span(),
                      all_tokens_.data(),
                      p.pos0[0],
                      x_.at(0, d),
                      q_.at(0, d),
                      att_.at(0, d),
                      h1_.at(0, config_.hidden_dim),
                      captures_.at(0, config_.vocab_size),
                      {},
                      0,
                      {},
                      {},
                      {},
                      nullptr};
    // The captures of the one kept row, straight from the kernels into the capture buffer.
    if (want.attention && p.keep[0] == 1) {
        s.probs = captures_.at(st.probs[0], L * H * stride);
        s.probs_stride = stride;
    }
    if (want.vectors && p.keep[0] == 1) {
        s.q_keep = captures_.at(st.q[0], L * d);
        s.out_keep = captures_.at(st.attn_out[0], L * d);
    }
    if (want.kv_rows && p.kv_keep[0] == 1)
        s.kv_keep = captures_.at(st.kv[0], ConstKvRows{nullptr, int(L), 1, int(kv)}.size());
    s.log = log_;
    run_fused_decode(*be_.fused(), s);
    if (log_) log_seq_.assign(log_->ops.size(), 0);  // every op at sequence 0's position
}

}  // namespace kvs
