#include "core/model/token_by_token.h"

#include <algorithm>
#include <vector>

#include "core/model/kv_rows.h"
#include "core/model/projection_rows.h"
#include "core/model/q_rows.h"

namespace kvs {
namespace {
// Row 0 of a one-row pass's scores and "none" flag (toy model) into row r of `all`.
void copy_row_extras(const AttentionRows& one, AttentionRows& all, int l, int h, int r) {
    if (!one.scores.empty()) {
        if (all.scores.empty()) all.scores.assign(all.p.size(), 0.0f);
        const auto src = one.score_row(l, h, 0);
        std::copy(src.begin(), src.end(), all.scores.begin() + all.row_offset(l, h, r));
    }
    if (one.is_empty_row(l, h, 0)) {
        if (all.empty_row.empty())
            all.empty_row.assign(std::size_t(all.n_layers) * all.n_heads * all.rows, 0);
        all.empty_row[(std::size_t(l) * all.n_heads + h) * all.rows + r] = 1;
    }
}

}  // namespace

StepCounts forward_token_by_token(Runner& runner, const Model& model, std::span<const int> tokens,
                                  const Capture& want, ForwardResult& out) {
    const int P = static_cast<int>(tokens.size()), pos0 = runner.kv().len;
    const ModelConfig& mc = model.config();
    StepCounts counts;
    ForwardResult one;
    AttentionRows all;
    std::vector<float> kv_rows,
        heads;  // kv_rows: [P][n_layers][2][kv_dim]; heads: [n_layers, n_heads, P]
    std::vector<float> q_rows, attn_out;  // [n_layers, P, dim]
    std::vector<float> projections;       // [n_layers, P, 3 dim + 3 kv_dim]
    OpLog ops;                            // every pass's ops, in order
    for (int p = 0; p < P; ++p) {
        runner.forward(tokens.subspan(p, 1), want, one);
        counts += model.count_forward(pos0 + p, 1);
        if (want.attention) {
            if (p == 0) all.resize(one.attention.n_layers, one.attention.n_heads, P, pos0);
            for (int l = 0; l < all.n_layers; ++l)
                for (int h = 0; h < all.n_heads; ++h) {
                    auto src = one.attention.row(l, h, 0);
                    std::copy(src.begin(), src.end(), all.row(l, h, p).begin());
                    copy_row_extras(one.attention, all, l, h, p);
                }
        }
        heads.resize(one.head_outputs.size() * P);
        for (std::size_t i = 0; i < one.head_outputs.size(); ++i)
            heads[i * P + p] = one.head_outputs[i];
        kv_rows.insert(kv_rows.end(), one.kv_rows.begin(), one.kv_rows.end());
        ops.append(one.ops);
        if (!one.q_rows.empty()) {
            // [n_layers, 1, dim] per pass -> row p of [n_layers, P, dim]
            const int H = mc.n_heads, hd = mc.head_dim();
            const ConstQRows q_in{one.q_rows.data(), mc.n_layers, 1, H, hd},
                out_in{one.attn_out.data(), mc.n_layers, 1, H, hd};
            q_rows.resize(ConstQRows{nullptr, mc.n_layers, P, H, hd}.size());
            attn_out.resize(q_rows.size());
            const QRows q_all{q_rows.data(), mc.n_layers, P, H, hd},
                out_all{attn_out.data(), mc.n_layers, P, H, hd};
            // std::copy: the web build's libc++ has no std::ranges algorithms.
            for (int l = 0; l < mc.n_layers; ++l) {
                {
                    const auto from = q_in.row(l, 0);
                    std::copy(from.begin(), from.end(), q_all.row(l, p).begin());
                }
                {
                    const auto from = out_in.row(l, 0);
                    std::copy(from.begin(), from.end(), out_all.row(l, p).begin());
                }
            }
        }
        if (!one.projections.empty()) {
            // [n_layers, 1, width] per pass -> row p of [n_layers, P, width]
            const ConstProjectionRows in{one.projections.data(), mc.n_layers, 1, mc.dim,
                                         mc.kv_dim()};
            projections.resize(
                ConstProjectionRows{nullptr, mc.n_layers, P, mc.dim, mc.kv_dim()}.size());
            const ProjectionRows all_rows{projections.data(), mc.n_layers, P, mc.dim, mc.kv_dim()};
            for (int l = 0; l < mc.n_layers; ++l)
                std::copy_n(one.projections.data() + in.offset(l, 0, in.X), in.width(),
                            projections.begin() + all_rows.offset(l, p, all_rows.X));
        }
    }
    out = std::move(one);
    out.attention = std::move(all);
    out.head_outputs = std::move(heads);
    out.q_rows = std::move(q_rows);
    out.ops = std::move(ops);
    out.attn_out = std::move(attn_out);
    out.projections = std::move(projections);
    // Each pass's K/V rows arrive as [n_layers, 2, 1, kv_dim], one after another; the trace wants
    // one block [n_layers, 2, P, kv_dim].
    const int L = mc.n_layers, kv = mc.kv_dim();
    out.kv_rows.assign(kv_rows.size(), 0.0f);
    out.kv_rows_kept = want.kv_rows ? P : 0;
    const KvRows stitched{out.kv_rows.data(), L, P, kv};
    const std::size_t per_pass = ConstKvRows{nullptr, L, 1, kv}.size();
    for (int p = 0; p < out.kv_rows_kept; ++p) {
        const ConstKvRows pass{kv_rows.data() + p * per_pass, L, 1, kv};
        for (int l = 0; l < L; ++l)
            for (int side : {KvRows::K, KvRows::V})
                std::copy_n(pass.row(l, side, 0).data(), kv, stitched.row(l, side, p).data());
    }
    return counts;
}

}  // namespace kvs
