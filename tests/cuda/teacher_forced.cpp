#include "tests/cuda/teacher_forced.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kvs::test {

TeacherForcedGap teacher_forced_gap(const Model& model, Backend& reference, Backend& other,
                                    const std::string& prompt, int decode_steps) {
    auto ra = model.make_runner(reference), rb = model.make_runner(other);
    const Capture want;  // attention and K/V rows, as a session records them
    ForwardResult a, b;
    TeacherForcedGap gap;
    auto compare = [&] {
        ++gap.steps;
        double worst = 0, largest = 0;
        for (std::size_t i = 0; i < a.logits.size(); ++i) {
            worst = std::max(worst, double(std::fabs(a.logits[i] - b.logits[i])));
            largest = std::max(largest, double(std::fabs(a.logits[i])));
            if (std::isnan(b.logits[i])) worst = INFINITY;
        }
        gap.worst_logit = std::max(gap.worst_logit, worst);
        gap.worst_rel_logit = std::max(gap.worst_rel_logit, largest > 0 ? worst / largest : worst);
        for (std::size_t i = 0; i < a.attention.p.size() && i < b.attention.p.size(); ++i)
            gap.worst_attention = std::max(gap.worst_attention,
                                           double(std::fabs(a.attention.p[i] - b.attention.p[i])));
        if (a.logits.size() != b.logits.size() || a.attention.p.size() != b.attention.p.size())
            gap.worst_logit = INFINITY;
    };
    std::vector<int> tokens = model.tokenizer().encode(prompt);
    ra->forward(tokens, want, a);
    rb->forward(tokens, want, b);
    compare();
    const int room = model.config().seq_len - static_cast<int>(tokens.size());
    for (int s = 0; s < std::min(decode_steps, room); ++s) {
        const int next =
            static_cast<int>(std::max_element(a.logits.begin(), a.logits.end()) - a.logits.begin());
        const int one[1] = {next};
        ra->forward(one, want, a);
        rb->forward(one, want, b);
        compare();
    }
    return gap;
}

}  // namespace kvs::test
