#include "core/session/logit_difference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvs {

double max_logit_difference(const StepRecord& a, const StepRecord& b) {
    if (a.logits.empty() || a.logits.size() != b.logits.size())
        return std::numeric_limits<double>::quiet_NaN();
    double d = 0;
    for (std::size_t i = 0; i < a.logits.size(); ++i)
        d = std::max(d, static_cast<double>(std::fabs(a.logits[i] - b.logits[i])));
    return d;
}

}  // namespace kvs
