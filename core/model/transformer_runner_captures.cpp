// What a step returns (attention weights, q and the attention output, K/V rows, logits), laid out
// in one capture buffer on the device, downloaded once and unpacked per sequence.
#include "core/model/transformer_runner.h"

namespace kvs {

void TransformerRunner::keep_new_kv(int l, const Pass& p, int i, const Capture& want,
                                    const SeqRows& r) {
    if (!want.kv_rows || p.kv_keep[i] == 0) return;
    const ConstKvRows kept_rows{nullptr, config_.n_layers, p.kv_keep[i], config_.kv_dim()};
    const std::size_t kv = config_.kv_dim(), n = std::size_t(p.kv_keep[i]) * kv;
    const std::size_t from = std::size_t(p.T[i]) * kv - n, at = p.captures.kv[i];
    be_.copy_rows(captures_.at(at + kept_rows.offset(l, kept_rows.K), n), n, r.k.at(from, n), n, 1,
                  n);
    be_.copy_rows(captures_.at(at + kept_rows.offset(l, kept_rows.V), n), n, r.v.at(from, n), n, 1,
                  n);
}

DeviceSpan TransformerRunner::probs_target(int l, const Pass& p, int i, const Capture& want) const {
    // probs: [H, T, n_keys]. Every row kept (prefill, decode): written straight into the capture
    // buffer; else into scratch, and the kept rows gathered into the capture buffer by one copy
    // (keep_attention). A graph pass that keeps no row writes none: its scratch would be
    // position-sized.
    const int T = p.T[i], keep = p.keep[i];
    if (!want.attention || (p.graph && keep < T)) return {};
    if (keep < T) return probs_.span();
    const std::size_t layer_probs = std::size_t(config_.n_heads) * keep * p.probs_row(i);
    return captures_.at(p.captures.probs[i] + l * layer_probs, layer_probs);
}

void TransformerRunner::keep_attention(int l, const Pass& p, int i, const Capture& want,
                                       const SeqRows& r) {
    const int T = p.T[i], keep = p.keep[i], H = config_.n_heads;
    if (want.attention && keep < T) {
        const std::size_t n_keys = p.pos0[i] + T, layer_probs = H * keep * p.probs_row(i);
        const DeviceSpan kept = captures_.at(p.captures.probs[i] + l * layer_probs, layer_probs);
        be_.copy_rows(kept, keep * n_keys, probs_.at((T - keep) * n_keys, 0), T * n_keys, H,
                      keep * n_keys);
    }
    if (want.vectors) {
        // q as attention read it (after RoPE), the output before wo mixes the heads.
        gather_rows(r.q, p.captures.q[i], l, T, keep);
        gather_rows(r.att, p.captures.attn_out[i], l, T, keep);
    }
}

void TransformerRunner::capture_projections(int l, const Pass& p, int i, bool rotated) {
    const int T = p.T[i], keep = p.keep[i];
    if (!p.captures.projections || keep == 0) return;
    using Part = ProjectionRows::Part;
    const ProjectionRows block{nullptr, config_.n_layers, keep, config_.dim, config_.kv_dim()};
    const std::size_t width = block.width(), row0 = std::size_t(p.first[i] + T - keep);
    // The last `keep` rows of the pass's [R, n] buffer into part `part` of each kept row.
    const auto part = [&](const DeviceBuffer& rows, Part which) {
        const std::size_t n = block.part_size(which);
        be_.copy_rows(
            captures_.at(p.captures.proj[i] + block.offset(l, 0, which), (keep - 1) * width + n),
            width, rows.at(row0 * n, std::size_t(keep) * n), n, keep, n);
    };
    if (rotated) {
        part(k_, Part::KRope);
        return;
    }
    part(x_, Part::X);
    part(xb_, Part::XNorm);
    part(q_, Part::Q);
    part(k_, Part::K);
    part(v_, Part::V);
}

void TransformerRunner::gather_rows(DeviceSpan rows, std::size_t at, int layer, int T, int keep) {
    const std::size_t d = config_.dim, n = std::size_t(keep) * d;
    be_.copy_rows(captures_.at(at + layer * n, n), n, rows.at(std::size_t(T - keep) * d, n), n, 1,
                  n);
}

void TransformerRunner::finish(std::span<const SeqInput> seqs, const Pass& p, const Capture& want,
                               std::span<ForwardResult> out) {
    const std::size_t L = config_.n_layers, kv = config_.kv_dim();
    for (int i = 0; i < p.B; ++i) {
        KvCache& cache = *caches_[seqs[i].slot];
        cache.set_len(p.pos0[i] + p.T[i]);
        // graph and paged: gathered in attend; fused: stored by the kernels
        if (!want.kv_rows || p.kv_keep[i] == 0 || p.graph || p.fused || cache.paged()) continue;
        // The last kv_keep rows of every layer's K, then V: [L, 2, kv_keep, kv_dim] in the capture
        // buffer.
        const ConstKvRows to{nullptr, int(L), p.kv_keep[i], int(kv)};
        const std::size_t block = std::size_t(p.kv_keep[i]) * kv,
                          layer = std::size_t(config_.seq_len) * kv;
        const std::size_t kept_from = std::size_t(cache.len() - p.kv_keep[i]) * kv,
                          at = p.captures.kv[i];
        be_.copy_rows(captures_.at(at + to.offset(0, to.K), 0), to.layer_floats(),
                      cache.k_all().at(kept_from, 0), layer, L, block);
        be_.copy_rows(captures_.at(at + to.offset(0, to.V), 0), to.layer_floats(),
                      cache.v_all().at(kept_from, 0), layer, L, block);
    }
    be_.download(host_.data(), captures_.at(0, p.captures.total), p.captures.total);
    for (int i = 0; i < p.B; ++i)
        unpack(p.captures, i, p.keep[i], p.kv_keep[i], p.probs_row(i), want, out[i]);
}

// Sequence i's part of the host copy -> out: logits, attention rows packed without masked cells,
// q and attention output rows, K/V rows.
void TransformerRunner::unpack(const CaptureLayout& at, int i, int keep, int kv_keep,
                               std::size_t probs_row, const Capture& want,
                               ForwardResult& out) const {
    const float* host = host_.data();
    const std::size_t vocab = config_.vocab_size;
    out.logits.assign(host + i * vocab, host + (i + 1) * vocab);
    if (want.attention)
        for (int l = 0; l < config_.n_layers; ++l)
            for (int h = 0; h < config_.n_heads; ++h)
                for (int r = 0; r < keep; ++r) {
                    auto row = out.attention.row(l, h, r);
                    const std::size_t src =
                        at.probs[i] +
                        ((std::size_t(l) * config_.n_heads + h) * keep + r) * probs_row;
                    std::memcpy(row.data(), host + src, row.size() * sizeof(float));
                }
    if (want.vectors) {
        const std::size_t n = std::size_t(config_.n_layers) * keep * config_.dim;
        out.q_rows.assign(host + at.q[i], host + at.q[i] + n);
        out.attn_out.assign(host + at.attn_out[i], host + at.attn_out[i] + n);
    }
    if (at.projections) {
        const std::size_t n =
            ConstProjectionRows{nullptr, config_.n_layers, keep, config_.dim, config_.kv_dim()}
                .size();
        out.projections.assign(host + at.proj[i], host + at.proj[i] + n);
    } else {
        out.projections.clear();
    }
    if (want.kv_rows) {
        const std::size_t n =
            ConstKvRows{nullptr, config_.n_layers, kv_keep, config_.kv_dim()}.size();
        out.kv_rows_kept = kv_keep;
        out.kv_rows.assign(host + at.kv[i], host + at.kv[i] + n);
    } else {
        out.kv_rows_kept = 0;
        out.kv_rows.clear();
    }
}

}  // namespace kvs
