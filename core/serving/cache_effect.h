#pragma once
// What a cache other than the full float32 one does to the next-token distribution: a bounded
// cache (attention sinks and a sliding window, BatchRunner::set_window) or a quantised one (int8
// or fp8-e4m3 rows, core/model/kv_quant.h), measured against the full float32 cache on the same
// tokens (teacher-forced): the prompt in one pass, then one row a pass, each pass's logits
// compared.
#include <span>

#include "core/model/kv_quant.h"
#include "core/model/model.h"

namespace kvs {

// The cache measured: its rows' type, and the rows a pass sees (window 0: every row).
struct CacheVariant {
    KvCacheType type = KvCacheType::F32;
    int sinks = 0, window = 0;
};

struct CacheEffect {
    int passes = 0;                   // passes compared
    int same_next_token = 0;          // passes whose most likely next token is the full cache's
    double max_logit_difference = 0;  // max over passes and the vocabulary of |variant - full|
};

// `tokens`: a prompt of prompt_len tokens, then the tokens that followed it (within the model's
// context). Throws kvs::Error for a model without a paged runner or tokens that do not fit.
CacheEffect cache_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                         int prompt_len, const CacheVariant& variant, int block_size);

// The two questions a serving run asks of it: a window of `window` rows after `sinks` sinks, and
// a cache of `type` rows.
CacheEffect window_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                          int prompt_len, int sinks, int window, int block_size);
CacheEffect cache_type_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                              int prompt_len, KvCacheType type, int block_size);

}  // namespace kvs
