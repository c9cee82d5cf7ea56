#include "gui/views/sampling_view.h"

#include <cmath>
#include <cstdio>

#include "gui/state/strings.h"

namespace kvs::gui {
namespace {

template <typename... Args>
std::string format(const char* fmt, Args... args) {
    char b[256];
    std::snprintf(b, sizeof b, fmt, args...);
    return b;
}

// A setting as the rule line writes it: 2, 0.9, 0.25 (no trailing zeros).
std::string setting_text(float v) {
    return format("%g", static_cast<double>(v));
}

}  // namespace

std::string logit_text(float v) {
    if (!std::isfinite(v)) return "n/a";
    return format("%.2f", static_cast<double>(v));
}

std::string probability_text(float p) {
    if (!std::isfinite(p)) return "n/a";
    const double pct = 100.0 * p;
    // Below a millionth: float rounding (a rest of 6e-8 after every kept token is listed) or
    // too small to tell, written as none at this precision.
    if (pct >= 0.1 || pct < 1e-4) return format("%.1f%%", pct);
    return format("%.2g%%", pct);  // 0.026%: a small share still says how small
}

SamplingView sampling_view(const SamplingStages& s) {
    SamplingView v;
    v.greedy = s.greedy;
    v.coin = s.coin;
    const bool top_k_on = !s.greedy && s.top_k > 0;
    const bool top_p_on = !s.greedy && s.top_p > 0 && s.top_p < 1;
    using K = SamplingColumnKind;
    SamplingColumn logit{K::Logit, tr("logit"), false, {}, {}, {}, 0, {}};
    SamplingColumn scaled{
        K::Scaled, s.greedy ? tr("÷ T (greedy)") : "÷ " + setting_text(s.temperature),
        false,     {},
        {},        {},
        0,         {}};
    SamplingColumn tempered{K::Tempered, tr("softmax"), true, {}, {}, {}, s.rest_tempered, {}};
    SamplingColumn topk{K::TopK,      top_k_on ? format(tr("top-k %d"), s.top_k) : tr("top-k off"),
                        true,         {},
                        {},           {},
                        s.rest_top_k, {}};
    SamplingColumn final_col{
        K::Final,     top_p_on ? "top-p " + setting_text(s.top_p) : tr("top-p off"),
        true,         {},
        {},           {},
        s.rest_final, {}};
    for (std::size_t i = 0; i < s.entries.size(); ++i) {
        const SamplingEntry& e = s.entries[i];
        v.ids.push_back(e.id);
        if (e.id == s.drawn) v.drawn_row = static_cast<int>(i);
        // A stage cuts a token it leaves at 0 that the stage before kept; one cut before stays
        // out ("-").
        auto put = [](SamplingColumn& c, float value, bool cut, bool out, bool prob) {
            c.value.push_back(value);
            c.cut.push_back(cut || out);
            c.text.push_back(cut    ? tr("cut")
                             : out  ? "-"
                             : prob ? probability_text(value)
                                    : logit_text(value));
        };
        put(logit, e.logit, false, false, false);
        put(scaled, e.scaled_logit, false, false, false);
        put(tempered, e.p_tempered, false, false, true);
        put(topk, e.p_top_k, e.p_top_k == 0 && e.p_tempered > 0, false, true);
        put(final_col, e.p_final, e.p_final == 0 && e.p_top_k > 0, e.p_final == 0 && e.p_top_k == 0,
            true);
        if (e.p_final > 0 && !s.greedy)
            v.strip.push_back({static_cast<int>(i), e.cdf_from, e.p_final});
    }
    for (SamplingColumn* c : {&tempered, &topk, &final_col})
        c->rest_text = probability_text(c->rest);
    v.columns = {logit, scaled, tempered, topk, final_col};
    if (s.greedy) {
        v.rule = tr("temperature 0: the largest logit is taken (greedy), no draw");
    } else {
        v.rule = format(tr("logits ÷ %s → softmax → %s (kept %d) → %s (kept %d) → renormalised"),
                        setting_text(s.temperature).c_str(), topk.head.c_str(), s.kept_top_k,
                        final_col.head.c_str(), s.kept_top_p);
        const char* walk = s.draw_by_id
                               ? tr(" → a coin %.4f walks the cumulative mass by token id")
                               : tr(" → a coin %.4f walks the cumulative mass, best first");
        v.rule += s.coin >= 0 ? format(walk, static_cast<double>(s.coin))
                              : std::string(tr(" → no draw (a preview)"));
    }
    return v;
}

}  // namespace kvs::gui
