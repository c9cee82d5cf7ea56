#pragma once
// What a bounded cache (sinks + a sliding window, BatchRunner::set_window) does to the next-token
// distribution, measured against the full cache on the same tokens (teacher-forced): the prompt
// in one pass, then one row a pass, each pass's logits compared.
#include <span>

#include "core/model/model.h"

namespace kvs {

struct WindowEffect {
    int passes = 0;                   // passes compared
    int same_next_token = 0;          // passes whose most likely next token is the full cache's
    double max_logit_difference = 0;  // max over passes and the vocabulary of |window - full|
};

// `tokens`: a prompt of prompt_len tokens, then the tokens that followed it (within the model's
// context). Throws kvs::Error for a model without a paged runner.
WindowEffect window_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                           int prompt_len, int sinks, int window, int block_size);

}  // namespace kvs
