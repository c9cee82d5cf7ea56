#include "cli/bench_weights.h"

#include <algorithm>
#include <cmath>

#include "core/model/compact_weights.h"
#include "core/model/transformer_model.h"
#include "core/session/logit_difference.h"

namespace kvs::cli {
namespace {

int argmax(const std::vector<float>& v) {
    return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::uint64_t bytes_per_token(const Model& m) {
    const auto* llama = dynamic_cast<const TransformerModel*>(&m);
    return weight_bytes_per_token(m.config(), llama ? llama->compact() : CompactWeights{});
}

}  // namespace

WeightsGap measure_weights_gap(const Model& compact, const Model& f32, Backend& be,
                               const std::vector<int>& prompt, int decode_steps) {
    WeightsGap gap;
    gap.bytes_per_token = bytes_per_token(compact);
    gap.f32_bytes_per_token = bytes_per_token(f32);
    auto rc = compact.make_runner(be), rf = f32.make_runner(be);
    Capture want;  // logits only
    want.attention = want.kv_rows = want.vectors = false;
    want.last_rows = 0;
    ForwardResult a, b;
    StepRecord sa, sb;  // max_logit_difference compares the logits of two step records
    auto compare = [&] {
        ++gap.steps;
        sa.logits = a.logits;
        sb.logits = b.logits;
        const double d = max_logit_difference(sa, sb);
        gap.max_logit_diff = std::isnan(d) ? INFINITY : std::max(gap.max_logit_diff, d);
        if (!gap.diverged) {
            if (argmax(a.logits) != argmax(b.logits))
                gap.diverged = true;
            else
                ++gap.same_greedy;
        }
    };
    rf->forward(prompt, want, a);
    rc->forward(prompt, want, b);
    compare();
    const int room = compact.config().seq_len - static_cast<int>(prompt.size());
    for (int s = 1; s <= std::min(decode_steps, room); ++s) {
        const int one[1] = {argmax(a.logits)};  // float32's greedy token, fed to both
        rf->forward(one, want, a);
        rc->forward(one, want, b);
        compare();
    }
    return gap;
}

}  // namespace kvs::cli
