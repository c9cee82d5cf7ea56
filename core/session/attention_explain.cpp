#include "core/session/attention_explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>

#include "core/model/kv_rows.h"
#include "core/model/q_rows.h"
#include "core/model/softmax.h"
#include "core/session/step_rows.h"
#include "core/util/numbering.h"

namespace kvs {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// nullopt of any breakdown, with *why set.
struct Fail {
    template <class T>
    operator std::optional<T>() const {
        return std::nullopt;
    }
};
Fail fail(std::string* why, std::string text) {
    if (why) *why = std::move(text);
    return {};
}

// What one (step, layer, head) needs before any row: the checks, the step's keys (K and V of
// the head's K/V head, where each came from) and the numbers every row shares.
struct HeadKeys {
    const StepRecord* r = nullptr;
    int layer = 0, head = 0, kv_head = 0;
    int n_keys = 0, head_dim = 0;
    bool by_rule = false;
    float scale = 1.0f;
    KeyMask mask;
    std::vector<float> k, v;       // [n_keys, d_k]
    std::vector<KvSource> source;  // [n_keys]
};

std::optional<HeadKeys> head_keys(const Trace& trace, const ModelConfig& c, int step, int layer,
                                  int head, std::string* why) {
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
    HeadKeys h;
    h.r = &r;
    h.layer = layer;
    h.head = head;
    h.kv_head = head / c.kv_mul();
    h.by_rule = r.q_rows.empty() && !a.scores.empty() && !r.head_outputs.empty();
    const std::size_t hd = c.head_dim(), kv_dim = c.kv_dim();
    if (!h.by_rule &&
        r.q_rows.size() !=
            ConstQRows{nullptr, c.n_layers, a.rows, c.n_heads, static_cast<int>(hd)}.size())
        return fail(why, "step " + std::to_string(step) + " kept no q vectors (capture is off)");
    h.n_keys = a.q_pos0 + a.rows;  // every key of the step; key_visible says which a row sees
    h.head_dim = static_cast<int>(hd);
    h.scale = 1.0f / std::sqrt(static_cast<float>(hd));
    h.mask = KeyMask{r.mask};
    const int K = h.n_keys;
    h.k.resize(std::size_t(K) * hd);
    h.v.resize(std::size_t(K) * hd);
    h.source.resize(K);
    const std::vector<KvAt> kv_at = kv_rows_at(steps, step);
    for (int j = 0; j < K; ++j) {
        const KvAt ref = j < static_cast<int>(kv_at.size()) ? kv_at[j] : KvAt{};
        if (!ref.step)
            return fail(why, "no step of the trace wrote the K/V row of position " +
                                 std::to_string(position_of_index(j)));
        if (ref.row < 0)
            return fail(why, "the K/V row of position " + std::to_string(position_of_index(j)) +
                                 " (written at step " + std::to_string(ref.step->index) +
                                 ") was dropped by the trace's memory budget");
        const ConstKvRows rows{ref.step->kv_rows.data(), c.n_layers, ref.step->kv_rows_kept,
                               int(kv_dim)};
        const std::size_t kv_head_at = std::size_t(h.kv_head) * hd;  // its part of a row
        std::copy_n(rows.row(layer, rows.K, ref.row).data() + kv_head_at, hd,
                    h.k.begin() + std::size_t(j) * hd);
        std::copy_n(rows.row(layer, rows.V, ref.row).data() + kv_head_at, hd,
                    h.v.begin() + std::size_t(j) * hd);
        h.source[j] = kv_source_of(r, j);
    }
    return h;
}

// Row `row`'s scores, scaled scores, mask and weights over every key, into spans of n_keys: the
// one computation behind a row's table and the block's cells. q: [d_k] (empty by rule).
void row_numbers(const HeadKeys& h, int row, std::span<const float> q, std::span<float> raw,
                 std::span<float> scaled, std::span<std::uint8_t> masked,
                 std::span<float> weights) {
    const AttentionRows& a = h.r->attention;
    const int q_index = a.q_pos0 + row;
    const auto w = a.row(h.layer, h.head, row);  // the keys the row kept: key_visible's
    const auto rule = a.score_row(h.layer, h.head, row);
    const std::size_t hd = h.head_dim;
    for (int j = 0; j < h.n_keys; ++j) {
        masked[j] = !key_visible(h.mask, q_index, j, h.r->pos0, h.n_keys);
        if (h.by_rule) {
            // The rule's score where the row kept one; a masked key's rule score is not kept.
            raw[j] = j < static_cast<int>(rule.size()) ? rule[j] : kNegInf;
        } else {
            double dot = 0;  // q · k_j over d_k
            for (std::size_t i = 0; i < hd; ++i)
                dot += double(q[i]) * double(h.k[std::size_t(j) * hd + i]);
            raw[j] = static_cast<float>(dot);
        }
        scaled[j] = raw[j] * h.scale;
        weights[j] = j < static_cast<int>(w.size()) ? w[j] : 0.0f;
    }
}

std::span<const float> q_of(const HeadKeys& h, const ModelConfig& c, int row) {
    if (h.by_rule) return {};
    const AttentionRows& a = h.r->attention;
    return ConstQRows{h.r->q_rows.data(), c.n_layers, a.rows, c.n_heads, h.head_dim}.head(
        h.layer, row, h.head);
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

KvSource kv_source_of(const StepRecord& r, int key) {
    const int new_from = r.kv.len - (r.kv_rows_written - r.kv_rows_recomputed);
    const int recomputed_from = new_from - r.kv_rows_recomputed;
    return key >= new_from          ? KvSource::New
           : key >= recomputed_from ? KvSource::Recomputed
                                    : KvSource::Cached;
}

std::optional<AttentionExplain> explain_attention(const Trace& trace, const ModelConfig& c,
                                                  int step, int layer, int head, int row,
                                                  std::string* why) {
    const auto h = head_keys(trace, c, step, layer, head, why);
    if (!h) return std::nullopt;
    const StepRecord& r = *h->r;
    const AttentionRows& a = r.attention;
    if (row < 0 || row >= a.rows)
        return fail(why, "row " + std::to_string(row) + " does not exist (step " +
                             std::to_string(step) + " kept " + std::to_string(a.rows) +
                             " query row" + (a.rows == 1 ? "" : "s") + ", 0.." +
                             std::to_string(a.rows - 1) + ")");
    AttentionExplain e;
    e.step = step;
    e.layer = layer;
    e.head = head;
    e.kv_head = h->kv_head;
    for (int g = e.kv_head * c.kv_mul(); g < (e.kv_head + 1) * c.kv_mul(); ++g)
        e.heads_sharing_kv.push_back(g);
    e.row = row;
    e.q_pos = a.q_pos0 + row;
    e.phase = r.phase;
    e.mode = r.mode;
    e.mask = r.mask;
    e.head_dim = h->head_dim;
    e.n_keys = h->n_keys;
    e.query_rows_computed = r.query_rows_computed;
    e.query_rows_used = r.query_rows_used;
    e.kv_rows_recomputed = r.kv_rows_recomputed;
    e.recomputed_max_delta = r.kv_recomputed_max_delta;
    e.scores_by_rule = h->by_rule;
    e.scale = h->scale;
    const auto q = q_of(*h, c, row);
    e.q.assign(q.begin(), q.end());
    e.k = h->k;
    e.v = h->v;
    e.source = h->source;
    const int K = e.n_keys;
    e.raw.resize(K);
    e.scaled.resize(K);
    e.masked.resize(K);
    e.weights.resize(K);
    row_numbers(*h, row, q, e.raw, e.scaled, e.masked, e.weights);
    const std::size_t hd = e.head_dim;
    e.empty_row = a.is_empty_row(layer, head, row);
    e.output.assign(hd, e.empty_row ? std::nanf("") : 0.0f);
    if (!e.empty_row)
        for (std::size_t i = 0; i < hd; ++i) {
            double sum = 0;  // Σ_j w_j · v_j[i]
            for (int j = 0; j < K; ++j) sum += double(e.weights[j]) * e.v[std::size_t(j) * hd + i];
            e.output[i] = static_cast<float>(sum);
        }
    if (h->by_rule) {
        const float o = r.head_outputs[(std::size_t(layer) * c.n_heads + head) * a.rows + row];
        e.model_output.assign(1, o);
    } else {
        const auto out =
            ConstQRows{r.attn_out.data(), c.n_layers, a.rows, c.n_heads, e.head_dim}.head(
                layer, row, head);
        e.model_output.assign(out.begin(), out.end());
    }
    return e;
}

std::optional<AttentionExplain> explain_query(const Trace& trace, const ModelConfig& c, int step,
                                              int layer, int head, int index, std::string* why) {
    const auto& steps = trace.steps();
    if (step < 0 || step >= static_cast<int>(steps.size()))
        return explain_attention(trace, c, step, layer, head, 0, why);  // says why
    const QueryRows rows = query_rows_of(steps[step]);
    if (index < 0) index = rows.first + rows.count - 1;
    if (!rows.has(index)) return fail(why, no_query_row_words(steps, step, index));
    return explain_attention(trace, c, step, layer, head, index - rows.first, why);
}

std::optional<AttentionBlock> explain_attention_block(const Trace& trace, const ModelConfig& c,
                                                      int step, int layer, int head,
                                                      std::string* why) {
    const auto h = head_keys(trace, c, step, layer, head, why);
    if (!h) return std::nullopt;
    const AttentionRows& a = h->r->attention;
    AttentionBlock b;
    b.step = step;
    b.layer = layer;
    b.head = head;
    b.q_pos0 = a.q_pos0;
    b.rows = a.rows;
    b.n_keys = h->n_keys;
    b.head_dim = h->head_dim;
    b.scores_by_rule = h->by_rule;
    b.scale = h->scale;
    const std::size_t cells = std::size_t(b.rows) * b.n_keys;
    b.raw.resize(cells);
    b.scaled.resize(cells);
    b.masked.resize(cells);
    b.weights.resize(cells);
    b.empty_row.resize(b.rows);
    if (!h->by_rule) b.q.resize(std::size_t(b.rows) * b.head_dim);
    for (int row = 0; row < b.rows; ++row) {
        const auto q = q_of(*h, c, row);
        std::copy(q.begin(), q.end(), b.q.begin() + std::size_t(row) * b.head_dim);
        const std::size_t at = b.at(row, 0), K = b.n_keys;
        row_numbers(*h, row, q, std::span(b.raw).subspan(at, K), std::span(b.scaled).subspan(at, K),
                    std::span(b.masked).subspan(at, K), std::span(b.weights).subspan(at, K));
        b.empty_row[row] = a.is_empty_row(layer, head, row);
    }
    return b;
}

float AttentionBlock::stage_value(int stage, int row, int key) const {
    if (row < 0 || row >= rows || key < 0 || key >= n_keys) return std::nanf("");
    const std::size_t i = at(row, key);
    switch (stage) {
        case 1:
            return raw[i];
        case 2:
            return scaled[i];
        case 3:
            return masked[i] ? kNegInf : scaled[i];
        case 4:
            return masked[i] || empty_row[row] ? std::nanf("") : weights[i];
        default:
            return std::nanf("");
    }
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
