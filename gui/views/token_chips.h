#pragma once
// The token strip's chips after step s: the prompt's tokens, then the token each step chose, each
// marked by what happened to it at step s. A chip is made when it is asked for, so a frame makes
// the chips it draws, not one per token in the cache.
#include <span>

#include "core/session/trace.h"

namespace kvs::gui {

enum class ChipKind {
    Pending,    // a prompt token before the prefill
    Prompt,     // processed at the prefill
    Generated,  // chosen at an earlier step
    Chosen,     // chosen at step s (drawn outlined)
};

struct TokenChip {
    int pos = 0;  // token index (position - 1)
    int id = 0;
    int step = -1;  // the step that chose it; -1: a prompt token
    ChipKind kind = ChipKind::Prompt;
    bool going_in = false;  // fed in at step s (its K/V row written there)
};

// Chips after step s (-1: none run yet): the prompt's, then one per step 0..s.
int token_chip_count(int prompt_len, int s);
// Chip k of those (0 <= k < token_chip_count).
TokenChip token_chip(std::span<const int> prompt, std::span<const StepRecord> steps, int s, int k);

}  // namespace kvs::gui
