#include "kernels/cuda/attention_plan.h"

#include "core/util/error.h"

namespace kvs::kern {

AttentionPlan plan_attention(const AttentionCall& c, const Recording& rec,
                             unsigned combine_threads) {
    AttentionPlan p;
    AttentionArgs& a = p.args;
    a = {c.out.data,
         c.q.data,
         c.cache_k.data,
         c.cache_v.data,
         c.probs.empty() ? nullptr : c.probs.data,
         c.T,
         c.pos0,
         c.n_heads,
         c.n_kv_heads,
         c.head_dim,
         nullptr};
    a.causal = c.causal ? 1 : 0;
    if (!attention_uses_decode(c.T)) {
        if (rec.on) throw Error("a prefill pass cannot be recorded into a decode graph");
        p.prefill = true;
        p.prefill_shape = attention_prefill_shape(c.T, c.n_heads, c.n_kv_heads, c.head_dim);
        return p;
    }
    // Recorded: the position from the step, probs rows the stride the runner gave them, and a
    // split grid for the most keys the replays see.
    if (rec.on) {
        a.pos_at = rec.pos_at;
        a.probs_stride = c.probs.empty() ? 0 : static_cast<int>(c.probs.size / c.n_heads);
    }
    p.split = attention_decode_split_shape(rec.on ? rec.max_keys : c.pos0 + 1, c.n_heads,
                                           c.n_kv_heads, c.head_dim);
    p.combine = attention_decode_combine_shape(c.n_heads, combine_threads);
    p.partial_floats =
        decode_partial_floats_for_cache(c.cache_k.size, c.n_heads, c.n_kv_heads, c.head_dim);
    return p;
}

void plan_paged(AttentionPlan& p, const PagedKeys& keys, const int* device_table) {
    keys.check();
    AttentionArgs& a = p.args;
    a.block_table = device_table;
    a.block_size = keys.table.block_size;
    a.sinks = keys.sinks;
    a.skip = keys.skip;
    a.sink_k = keys.sink_k.empty() ? nullptr : keys.sink_k.data;
}

}  // namespace kvs::kern
