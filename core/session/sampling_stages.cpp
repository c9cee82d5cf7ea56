#include "core/session/sampling_stages.h"

#include <algorithm>

namespace kvs {
namespace {

// The n most likely token ids by logit, best first, equal logits by id.
std::vector<int> most_likely(std::span<const float> logits, int n) {
    const auto better = [&](int a, int b) {
        return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
    };
    std::vector<int> best;
    best.reserve(n + 1);
    for (int i = 0; i < static_cast<int>(logits.size()) && n > 0; ++i) {
        if (static_cast<int>(best.size()) == n && !better(i, best.back())) continue;
        best.insert(std::upper_bound(best.begin(), best.end(), i, better), i);
        if (static_cast<int>(best.size()) > n) best.pop_back();
    }
    return best;
}

float rest_of(float total, float shown) {
    return std::max(0.0f, total - shown);
}

}  // namespace

SamplingStages sampling_stages(std::span<const float> logits, const SamplerConfig& c, float coin,
                               int n_entries) {
    SamplingStages s;
    const int n = static_cast<int>(logits.size());
    s.temperature = c.temperature;
    s.top_k = c.top_k;
    s.top_p = c.top_p;
    s.vocab = n;
    if (n == 0) return s;
    s.greedy = c.temperature == 0.0f || n == 1;
    std::vector<float> p(n);
    softmax(logits, p);
    std::vector<int> ids = most_likely(logits, std::clamp(n_entries, 0, n));
    ShapedDistribution d;
    if (s.greedy) {
        s.drawn = argmax(logits);
        s.kept_top_k = n;
        s.kept_top_p = 1;
    } else {
        shape_distribution(logits, c, d, true);
        s.kept_top_k = d.kept_top_k;
        s.kept_top_p = d.top_p_on ? d.nucleus : d.kept_top_k;
        s.nucleus_mass = d.nucleus_mass;
        s.draw_by_id = !d.top_p_on;
        if (coin >= 0) {
            s.coin = coin;
            s.drawn = draw_from(d, logits, coin);
        }
    }
    if (s.drawn >= 0 && std::find(ids.begin(), ids.end(), s.drawn) == ids.end())
        ids.push_back(s.drawn);
    // Each token's final probability and where its interval starts, in the draw's order, summed
    // in float as draw_from sums (so an entry's interval holds exactly the coins that pick it).
    std::vector<float> final_p(ids.size(), 0.0f), cdf_from(ids.size(), 0.0f);
    std::vector<int> entry(n, -1);  // [vocab] the token's place in ids, -1: not shown
    for (std::size_t e = 0; e < ids.size(); ++e) entry[ids[e]] = static_cast<int>(e);
    if (s.greedy) {
        final_p[entry[s.drawn]] = 1.0f;
    } else if (!d.top_p_on) {
        float cdf = 0.0f;
        for (int i = 0; i < n; ++i) {
            if (const int e = entry[i]; e >= 0) {
                cdf_from[e] = cdf;
                final_p[e] = d.probs[i];
            }
            cdf += d.probs[i];
        }
    } else if (!d.no_candidates) {
        float cdf = 0.0f;
        for (int k = 0; k < d.nucleus; ++k) {
            const int id = d.order[k];
            if (const int e = entry[id]; e >= 0) {
                cdf_from[e] = cdf / d.nucleus_mass;
                final_p[e] = d.probs[id] / d.nucleus_mass;
            }
            cdf += d.probs[id];
        }
    }
    float shown_p = 0, shown_t = 0, shown_k = 0, shown_f = 0;
    for (std::size_t e = 0; e < ids.size(); ++e) {
        const int id = ids[e];
        SamplingEntry x;
        x.id = id;
        x.logit = logits[id];
        x.p = p[id];
        if (s.greedy) {
            x.scaled_logit = x.logit;
            x.p_tempered = x.p_top_k = x.p;
        } else {
            x.scaled_logit = logits[id] / c.temperature;
            x.p_tempered = d.tempered[id];
            x.p_top_k = d.probs[id];
        }
        x.p_final = final_p[e];
        x.cdf_from = cdf_from[e];
        shown_p += x.p, shown_t += x.p_tempered, shown_k += x.p_top_k, shown_f += x.p_final;
        s.entries.push_back(x);
    }
    s.rest_p = rest_of(1.0f, shown_p);
    s.rest_tempered = rest_of(1.0f, shown_t);
    s.rest_top_k = rest_of(1.0f, shown_k);
    s.rest_final = rest_of(1.0f, shown_f);
    return s;
}

}  // namespace kvs
