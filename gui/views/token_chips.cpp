#include "gui/views/token_chips.h"

namespace kvs::gui {

int token_chip_count(int prompt_len, int s) {
    return prompt_len + (s < 0 ? 0 : s + 1);
}

TokenChip token_chip(std::span<const int> prompt, std::span<const StepRecord> steps, int s, int k) {
    const int P = static_cast<int>(prompt.size());
    TokenChip c;
    c.pos = k;
    if (k < P) {
        c.id = prompt[k];
        c.kind = s < 0 ? ChipKind::Pending : ChipKind::Prompt;
    } else {
        c.step = k - P;
        c.id = steps[c.step].token_out;
        c.kind = c.step == s ? ChipKind::Chosen : ChipKind::Generated;
    }
    // Step s fed in the positions it wrote: the prompt at the prefill, else the newest one.
    if (s >= 0) {
        const int end = steps[s].kv.len, begin = s == 0 ? 0 : end - 1;
        c.going_in = k >= begin && k < end;
    }
    return c;
}

}  // namespace kvs::gui
