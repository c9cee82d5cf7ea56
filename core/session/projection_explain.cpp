#include "core/session/projection_explain.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "core/model/projection_rows.h"
#include "core/model/q_rows.h"
#include "core/session/step_rows.h"

namespace kvs {
namespace {

std::optional<ProjectionExplain> fail(std::string* why, std::string text) {
    if (why) *why = std::move(text);
    return std::nullopt;
}

double length(const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += double(x) * x;
    return std::sqrt(s);
}

// Each pair's angle from `a` to `b`: [n / 2].
std::vector<float> pair_angles(const std::vector<float>& a, const std::vector<float>& b) {
    std::vector<float> out(a.size() / 2);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const double a0 = a[2 * i], a1 = a[2 * i + 1], b0 = b[2 * i], b1 = b[2 * i + 1];
        out[i] = (a0 == 0 && a1 == 0) || (b0 == 0 && b1 == 0)
                     ? std::numeric_limits<float>::quiet_NaN()
                     : static_cast<float>(std::atan2(a0 * b1 - a1 * b0, a0 * b0 + a1 * b1));
    }
    return out;
}

std::vector<float> slice(std::span<const float> v, std::size_t at, std::size_t n) {
    return {v.begin() + at, v.begin() + at + n};
}

}  // namespace

std::optional<ProjectionExplain> explain_projection(const Trace& trace, const ModelConfig& c,
                                                    int step, int layer, int head, int row,
                                                    std::string* why) {
    const auto& steps = trace.steps();
    if (step < 0 || step >= static_cast<int>(steps.size()))
        return fail(why, "step " + std::to_string(step) + " does not exist (the trace has " +
                             std::to_string(steps.size()) + " steps)");
    if (layer < 0 || layer >= c.n_layers)
        return fail(why, "layer " + std::to_string(layer) + " does not exist (the model has " +
                             std::to_string(c.n_layers) + ")");
    if (head < 0 || head >= c.n_heads)
        return fail(why, "head " + std::to_string(head) + " does not exist (the model has " +
                             std::to_string(c.n_heads) + ")");
    const StepRecord& r = steps[step];
    if (r.payload_evicted)
        return fail(why, "step " + std::to_string(step) +
                             "'s tensors were dropped by the trace's memory budget");
    const int rows = r.attention.rows;
    const ConstProjectionRows block{r.projections.data(), c.n_layers, rows, c.dim, c.kv_dim()};
    if (rows == 0 || r.projections.size() != block.size())
        return fail(why, "step " + std::to_string(step) +
                             " kept no projections (the toy has none; a step through the fused "
                             "decode kernels or with capture off keeps none)");
    const ConstQRows q_rows{r.q_rows.data(), c.n_layers, rows, c.n_heads, c.head_dim()};
    if (r.q_rows.size() != q_rows.size())
        return fail(why, "step " + std::to_string(step) + " kept no q vectors");
    if (row < 0 || row >= rows)
        return fail(why, "row " + std::to_string(row) + " does not exist (step " +
                             std::to_string(step) + " kept " + std::to_string(rows) + ")");
    ProjectionExplain e;
    e.step = step;
    e.layer = layer;
    e.head = head;
    e.kv_head = head / c.kv_mul();
    e.row = row;
    e.q_pos = r.attention.q_pos0 + row;
    e.phase = r.phase;
    e.mode = r.mode;
    e.dim = c.dim;
    e.head_dim = c.head_dim();
    e.n_heads = c.n_heads;
    e.n_kv_heads = c.n_kv_heads;
    e.rope = !c.gpt2();
    e.layer_norm = c.gpt2();
    e.bias = c.qkv_bias || c.gpt2();
    using P = ConstProjectionRows;
    const auto x = block.part(layer, row, P::X);
    e.x.assign(x.begin(), x.end());
    const auto xn = block.part(layer, row, P::XNorm);
    e.x_norm.assign(xn.begin(), xn.end());
    double sum = 0, squares = 0;
    for (float v : e.x) sum += v, squares += double(v) * v;
    e.x_mean = sum / c.dim;
    e.x_rms = std::sqrt(squares / c.dim);
    const std::size_t hd = e.head_dim, q_at = std::size_t(head) * hd, kv_at = e.kv_head * hd;
    e.q = slice(block.part(layer, row, P::Q), q_at, hd);
    const auto qr = q_rows.head(layer, row, head);
    e.q_rope.assign(qr.begin(), qr.end());
    e.k = slice(block.part(layer, row, P::K), kv_at, hd);
    e.k_rope = slice(block.part(layer, row, P::KRope), kv_at, hd);
    e.v = slice(block.part(layer, row, P::V), kv_at, hd);
    e.q_len = length(e.q);
    e.q_rope_len = length(e.q_rope);
    e.k_len = length(e.k);
    e.k_rope_len = length(e.k_rope);
    e.q_angle = pair_angles(e.q, e.q_rope);
    e.k_angle = pair_angles(e.k, e.k_rope);
    e.wq_first = static_cast<int>(q_at);
    e.wk_first = static_cast<int>(kv_at);
    e.cache_row = e.q_pos;
    e.own = kv_source_of(r, e.q_pos);
    // The keys the query reads (a session's mask has no window: causal, 0..q_pos; without the
    // mask, every row), counted by where each came from: the sources are three runs of rows.
    const int last = r.mask == AttentionMask::Bidirectional ? r.kv.len - 1 : e.q_pos;
    e.keys_read = last + 1;
    const int new_from = r.kv.len - (r.kv_rows_written - r.kv_rows_recomputed);
    const int recomputed_from = new_from - r.kv_rows_recomputed;
    const auto in = [&](int from, int to) {  // keys of [from, to) read, the query's own left out
        const int n = std::max(0, std::min(to, last + 1) - std::max(from, 0));
        return n - (e.q_pos >= from && e.q_pos < to && e.q_pos <= last ? 1 : 0);
    };
    e.read_cached = in(0, recomputed_from);
    e.read_recomputed = in(recomputed_from, new_from);
    e.read_new = in(new_from, r.kv.len);
    return e;
}

std::optional<ProjectionExplain> explain_projection_query(const Trace& trace, const ModelConfig& c,
                                                          int step, int layer, int head, int index,
                                                          std::string* why) {
    const auto& steps = trace.steps();
    if (step < 0 || step >= static_cast<int>(steps.size()))
        return explain_projection(trace, c, step, layer, head, 0, why);  // says why
    const QueryRows rows = query_rows_of(steps[step]);
    if (index < 0) index = rows.first + rows.count - 1;
    if (!rows.has(index)) return fail(why, no_query_row_words(steps, step, index));
    return explain_projection(trace, c, step, layer, head, index - rows.first, why);
}

}  // namespace kvs
