#pragma once
// What a quantised KV cache (int8 or fp8-e4m3 rows, core/model/kv_quant.h) does to the next-token
// distribution, measured against the float32 cache on the same tokens (teacher-forced): the
// prompt in one pass, then one row a pass, each pass's logits compared.
#include <span>

#include "core/model/kv_quant.h"
#include "core/model/model.h"

namespace kvs {

struct CacheTypeEffect {
    int passes = 0;                   // passes compared
    int same_next_token = 0;          // passes whose most likely next token is float32's
    double max_logit_difference = 0;  // max over passes and the vocabulary of |quantised - f32|
};

// `tokens`: a prompt of prompt_len tokens, then the tokens that followed it (within the model's
// context). Throws kvs::Error for a model without a paged runner.
CacheTypeEffect cache_type_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                                  int prompt_len, KvCacheType type, int block_size);

}  // namespace kvs
