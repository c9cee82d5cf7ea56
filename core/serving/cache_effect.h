#pragma once
// What a cache other than the full float32 one does to the next-token distribution: a bounded
// cache (attention sinks and a sliding window, BatchRunner::set_window) or a quantised one (int8
// or fp8-e4m3 rows, core/model/kv_quant.h), measured against the full float32 cache on the same
// tokens (teacher-forced): the prompt in one pass, then one row a pass, each pass's logits
// compared. And StreamingLLM's own experiment: a text longer than the model's context through
// bounded caches, scored by perplexity within the context and past it.
#include <span>

#include "core/model/kv_blocks.h"
#include "core/model/model.h"

namespace kvs {

// The cache measured: its rows' type and scales, and the rows a pass sees (window 0: every row).
struct CacheVariant {
    KvCacheType type = KvCacheType::F32;
    KvScaleMode scale_mode = KvScaleMode::Token;
    KvScales scales;  // fixed scales (Tensor, ChannelK)
    int sinks = 0, window = 0;
    SinkPositions positions = SinkPositions::Cache;
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
                          int prompt_len, int sinks, int window, int block_size,
                          SinkPositions positions = SinkPositions::Cache);
CacheEffect cache_type_effect(const Model& model, Backend& backend, std::span<const int> tokens,
                              int prompt_len, KvCacheType type, int block_size,
                              KvScaleMode mode = KvScaleMode::Token, const KvScales& scales = {});

// Perplexity of a text's tokens, teacher-forced one a pass after its first: exp of the mean
// -log p the model gives each next token, those at positions within the context and those
// past it (a position counted from 1: the token predicted at position p > context is past it).
struct Perplexity {
    double within = 0, past = 0;  // 0 where no token was scored
    int scored_within = 0, scored_past = 0;
};

// StreamingLLM's comparison (its Figure 3) on one text: the full cache (within the context only),
// the window with its sinks numbered as StreamingLLM numbers them (SinkPositions::Cache) and at
// their original positions, and the window widened by the sinks' rows with no sinks (as many
// rows seen, none of them the first).
struct StreamEffect {
    int tokens = 0, context = 0;
    int sinks = 0, window = 0;
    Perplexity full, sinks_cache, sinks_original, no_sinks;
};

// Throws kvs::Error for a model without a paged runner, or a text the full cache cannot start.
StreamEffect stream_effect(const Model& model, Backend& backend, std::span<const int> text,
                           int sinks, int window, int block_size);

}  // namespace kvs
