#include "core/session/attention_explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>

#include "core/model/kv_rows.h"
#include "core/model/softmax.h"

namespace kvs {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::optional<AttentionExplain> fail(std::string* why, std::string text) {
    if (why) *why = std::move(text);
    return std::nullopt;
}

// Where the K and V of a key position are in the trace: the step that introduced the position
// keeps its row in kv_rows ([n_layers, 2, kv_rows_kept, kv_dim], ending at that step's cache
// length). Null when that step's payload is gone.
struct KvRowRef {
    const StepRecord* step = nullptr;
    int row = 0;
};

KvRowRef find_kv_row(const std::vector<StepRecord>& steps, int upto, int pos) {
    // A step that kept the row itself (it recomputed it: the bidirectional session keeps every
    // row, as each one changed), else the step that introduced the position.
    const StepRecord& at = steps[upto];
    if (!at.kv_rows.empty() && pos >= at.kv.len - at.kv_rows_kept && pos < at.kv.len)
        return {&at, pos - (at.kv.len - at.kv_rows_kept)};
    for (int s = 0; s <= upto; ++s) {
        const StepRecord& r = steps[s];
        if (r.kv.len <= pos) continue;
        const int first = r.kv.len - r.kv_rows_kept;
        if (r.kv_rows.empty() || pos < first) return {&r, -1};
        return {&r, pos - first};
    }
    return {};
}

}  // namespace

const char* kv_source_name(KvSource s) {
    switch (s) {
        case KvSource::Cached:
            return "cached";
        case KvSource::New:
            return "new";
        case KvSource::Recomputed:
            return "recomputed";
    }
    return "?";
}

std::optional<AttentionExplain> explain_attention(const Trace& trace, const ModelConfig& c,
                                                  int step, int layer, int head, int row,
                                                  std::string* why) {
    const auto& steps = trace.steps();
    if (steps.empty()) return fail(why, "no step has run yet");
    if (step < 0 || step >= static_cast<int>(steps.size()))
        return fail(why, "step " + std::to_string(step) + " does not exist (the trace has " +
                             std::to_string(steps.size()) + " steps, 0.." +
                             std::to_string(steps.size() - 1) + ")");
    if (layer < 0 || layer >= c.n_layers)
        return fail(why, "layer " + std::to_string(layer) + " does not exist (the model has " +
                             std::to_string(c.n_layers) + ", 0.." + std::to_string(c.n_layers - 1) +
                             ")");
    if (head < 0 || head >= c.n_heads)
        return fail(why, "head " + std::to_string(head) + " does not exist (the model has " +
                             std::to_string(c.n_heads) + ", 0.." + std::to_string(c.n_heads - 1) +
                             ")");
    const StepRecord& r = steps[step];
    if (r.payload_evicted)
        return fail(why, "step " + std::to_string(step) +
                             "'s tensors were dropped by the trace's memory budget");
    const AttentionRows& a = r.attention;
    if (a.p.empty())
        return fail(why, "step " + std::to_string(step) + " kept no attention weights");
    if (row < 0 || row >= a.rows)
        return fail(why, "row " + std::to_string(row) + " does not exist (step " +
                             std::to_string(step) + " kept " + std::to_string(a.rows) +
                             " query row" + (a.rows == 1 ? "" : "s") + ", 0.." +
                             std::to_string(a.rows - 1) + ")");
    const bool by_rule = r.q_rows.empty() && !a.scores.empty() && !r.head_outputs.empty();
    const std::size_t dim = c.dim, hd = c.head_dim(), kv_dim = c.kv_dim();
    if (!by_rule && r.q_rows.size() != std::size_t(c.n_layers) * a.rows * dim)
        return fail(why, "step " + std::to_string(step) + " kept no q vectors (capture is off)");

    AttentionExplain e;
    e.step = step;
    e.layer = layer;
    e.head = head;
    e.kv_head = head / c.kv_mul();
    for (int h = e.kv_head * c.kv_mul(); h < (e.kv_head + 1) * c.kv_mul(); ++h)
        e.heads_sharing_kv.push_back(h);
    e.row = row;
    e.q_pos = a.q_pos0 + row;
    e.phase = r.phase;
    e.mode = r.mode;
    e.head_dim = static_cast<int>(hd);
    e.n_keys = a.q_pos0 + a.rows;  // every key of the step; later ones than q_pos are masked
    e.query_rows_computed = r.query_rows_computed;
    e.query_rows_used = r.query_rows_used;
    e.kv_rows_recomputed = r.kv_rows_recomputed;
    e.recomputed_max_delta = r.kv_recomputed_max_delta;
    e.scores_by_rule = by_rule;
    e.scale = 1.0f / std::sqrt(static_cast<float>(hd));

    // Provenance: the rows this step wrote that the cache did not hold are new; before them, the
    // rows it recomputed; before those, rows read from the cache.
    const int new_from = r.kv.len - (r.kv_rows_written - r.kv_rows_recomputed);
    const int recomputed_from = new_from - r.kv_rows_recomputed;

    const int K = e.n_keys;
    const std::size_t q_at = (std::size_t(layer) * a.rows + row) * dim + std::size_t(head) * hd;
    if (!by_rule) e.q.assign(r.q_rows.begin() + q_at, r.q_rows.begin() + q_at + hd);
    e.k.resize(std::size_t(K) * hd);
    e.v.resize(std::size_t(K) * hd);
    e.source.resize(K);
    e.raw.resize(K);
    e.scaled.resize(K);
    e.masked.resize(K);
    e.weights.assign(K, 0.0f);
    const auto w = a.row(layer, head, row);  // keys 0..q_pos, the causal ones
    const auto rule = a.score_row(layer, head, row);
    for (int j = 0; j < K; ++j) {
        const KvRowRef ref = find_kv_row(steps, step, j);
        if (!ref.step)
            return fail(why,
                        "no step of the trace wrote the K/V row of position " + std::to_string(j));
        if (ref.row < 0)
            return fail(why, "the K/V row of position " + std::to_string(j) + " (written at step " +
                                 std::to_string(ref.step->index) +
                                 ") was dropped by the trace's memory budget");
        const ConstKvRows rows{ref.step->kv_rows.data(), c.n_layers, ref.step->kv_rows_kept,
                               int(kv_dim)};
        const std::size_t kv_head_at = std::size_t(e.kv_head) * hd;  // its part of a row
        std::copy_n(rows.row(layer, rows.K, ref.row).data() + kv_head_at, hd,
                    e.k.begin() + std::size_t(j) * hd);
        std::copy_n(rows.row(layer, rows.V, ref.row).data() + kv_head_at, hd,
                    e.v.begin() + std::size_t(j) * hd);
        e.source[j] = j >= new_from          ? KvSource::New
                      : j >= recomputed_from ? KvSource::Recomputed
                                             : KvSource::Cached;
        e.masked[j] = !a.all_keys && j > e.q_pos;
        if (by_rule) {
            // The rule's score where the row kept one; a masked key's rule score is not kept.
            e.raw[j] = j <= e.q_pos ? rule[j] : kNegInf;
        } else {
            double dot = 0;  // q · k_j over d_k
            for (std::size_t i = 0; i < hd; ++i)
                dot += double(e.q[i]) * double(e.k[std::size_t(j) * hd + i]);
            e.raw[j] = static_cast<float>(dot);
        }
        e.scaled[j] = e.raw[j] * e.scale;
        if (j < static_cast<int>(w.size())) e.weights[j] = w[j];
    }
    e.empty_row = a.is_empty_row(layer, head, row);
    e.output.assign(hd, e.empty_row ? std::nanf("") : 0.0f);
    if (!e.empty_row)
        for (std::size_t i = 0; i < hd; ++i) {
            double sum = 0;  // Σ_j w_j · v_j[i]
            for (int j = 0; j < K; ++j) sum += double(e.weights[j]) * e.v[std::size_t(j) * hd + i];
            e.output[i] = static_cast<float>(sum);
        }
    if (by_rule) {
        const float o = r.head_outputs[(std::size_t(layer) * c.n_heads + head) * a.rows + row];
        e.model_output.assign(1, o);
    } else {
        e.model_output.assign(r.attn_out.begin() + q_at, r.attn_out.begin() + q_at + hd);
    }
    return e;
}

std::vector<double> softmax_of_shown(const AttentionExplain& e) {
    std::vector<double> w(e.n_keys);
    for (int j = 0; j < e.n_keys; ++j)
        w[j] = e.masked[j] ? -std::numeric_limits<double>::infinity() : double(e.scaled[j]);
    softmax(std::span<double>(w));
    return w;
}

double softmax_error(const AttentionExplain& e) {
    const auto w = softmax_of_shown(e);
    double err = 0;
    for (int j = 0; j < e.n_keys; ++j) err = std::max(err, std::fabs(w[j] - e.weights[j]));
    return err;
}

double output_error(const AttentionExplain& e) {
    if (e.output.size() != e.model_output.size()) return std::numeric_limits<double>::infinity();
    double err = 0;
    for (std::size_t i = 0; i < e.output.size(); ++i) {
        const bool a = std::isnan(e.output[i]), b = std::isnan(e.model_output[i]);
        if (a || b) {
            if (a != b) return std::numeric_limits<double>::infinity();
            continue;
        }
        err = std::max(err, std::fabs(double(e.output[i]) - e.model_output[i]));
    }
    return err;
}

}  // namespace kvs
