// A paged cache under the pass: every sequence's new rows stored into their blocks through the
// block table, then each one's keys read in place through the table (gathered, dequantised,
// where the backend cannot), a window's sinks and recent rows only, StreamingLLM's sinks turned to
// sit before the window.
#include "core/model/transformer_runner.h"

namespace kvs {

namespace {

// A run of rows for_each_block_run names: refused when its block was let go (a window's).
void held_row(int position, int row, int) {
    if (row < 0) throw Error("K/V row " + std::to_string(position) + "'s block was let go");
}

BlockTable block_table(const KvCache& cache) {
    const std::span<const int> t = cache.table();
    return {t.data(), static_cast<int>(t.size()), cache.pool()->block_size()};
}

}  // namespace

void TransformerRunner::attend_all(int l, std::span<const SeqInput> seqs, const Pass& p,
                                   const Capture& want) {
    if (!paged_) {
        for (int i = 0; i < p.B; ++i) attend(l, *caches_[seqs[i].slot], p, i, want);
        return;
    }
    for (int i = 0; i < p.B; ++i) store_paged(l, *caches_[seqs[i].slot], p, i, want);
    for (int i = 0; i < p.B; ++i) attend_paged(l, *caches_[seqs[i].slot], p, i, want);
}

void TransformerRunner::store_paged(int l, KvCache& cache, const Pass& p, int i,
                                    const Capture& want) {
    const CountedAt counted(op_seq_, i);
    const SeqRows r = rows_of(p, i);
    rope_rows(l, p, i, r);
    // The new rows into their blocks (a quantised pool quantises them as it stores).
    op(OpKind::KvAppend, l, p.T[i], p.pos0[i]);
    const KvBlockPool& pool = *cache.pool();
    if (pool.quantised()) {
        through_table(cache, l, p.pos0[i], p.T[i], r.k, r.v, Way::ToBlocks);
    } else {
        for_each_block_run(cache.table(), pool.block_size(), p.pos0[i], p.T[i], held_row);
        be_.kv_append_paged(pool.k(l), pool.v(l), r.k, r.v, p.pos0[i], p.T[i], config_.kv_dim(),
                            block_table(cache));
    }
    keep_new_kv(l, p, i, want, r);
}

TransformerRunner::SeenKeys TransformerRunner::seen_keys(int pos0, int T) const {
    // The cached rows the window keeps (all of them without one), then the pass's own.
    const CachedRowsSeen c =
        cached_rows_seen(KeyMask{AttentionMask::Causal, sinks_, window_}, pos0);
    SeenKeys k;
    k.sinks = c.sinks_end;
    k.from = c.from;
    k.count = k.sinks + (pos0 + T - k.from);
    return k;
}

int TransformerRunner::sink_shift(const SeenKeys& keys) const {
    // StreamingLLM numbers the cache's rows 0, 1, ...: the sinks, then the window's rows right
    // after them. Relative to the window (RoPE sees only differences), that puts the sinks just
    // before `from` instead of at 0.
    if (window_ == 0 || sink_positions_ != SinkPositions::Cache || keys.sinks == 0) return 0;
    return keys.from - keys.sinks;
}

void TransformerRunner::shift_keys(int l, DeviceSpan k, int rows, int shift) {
    const std::size_t kv = config_.kv_dim();
    if (shift_q_.size() < std::size_t(config_.dim)) shift_q_ = DeviceBuffer(be_, config_.dim);
    op(OpKind::Rope, l, rows, shift);
    for (int r = 0; r < rows; ++r)
        be_.rope(shift_q_.span(), k.at(r * kv, kv), 1, shift, config_.dim, config_.kv_dim(),
                 config_.head_dim(), inv_freq_.span());
}

void TransformerRunner::attend_paged(int l, KvCache& cache, const Pass& p, int i,
                                     const Capture& want) {
    const CountedAt counted(op_seq_, i);
    const int T = p.T[i], pos0 = p.pos0[i];
    const std::size_t kv = config_.kv_dim();
    const SeqRows r = rows_of(p, i);
    const KvBlockPool& pool = *cache.pool();
    // Every key this pass sees is in the blocks now, the pass's own rows too (store_paged), so
    // they are read as the cache holds them whichever pass computed them.
    const SeenKeys keys = seen_keys(pos0, T);
    const int shift = sink_shift(keys), bs = pool.block_size();
    op(OpKind::Scores, l, T, pos0);
    op(OpKind::Softmax, l, T, pos0, false);
    op(OpKind::WeightedSum, l, T, pos0, false);
    const int seen = keys.count - T;  // keys before the pass's own
    const bool causal = mask_ == AttentionMask::Causal;
    if (!pool.quantised() && be_.attends_paged_in_place()) {
        // Read in place through the table: key s at position s among the sinks, then the
        // window's rows from `from` on (the sinks' K moved forward from a copy).
        const std::span<const int> table = cache.table();
        PagedKeys pk;
        pk.table = block_table(cache);
        pk.sinks = keys.sinks;
        pk.skip = keys.from - keys.sinks;
        for_each_block_run(table, bs, 0, keys.sinks, held_row);
        for_each_block_run(table, bs, keys.from, keys.count - keys.sinks, held_row);
        if (shift > 0) {
            if (sink_k_.size() < keys.sinks * kv) sink_k_ = DeviceBuffer(be_, keys.sinks * kv);
            int at = 0;
            for_each_block_run(table, bs, 0, keys.sinks, [&](int, int row, int run) {
                const std::size_t n = std::size_t(run) * kv;
                be_.copy_rows(sink_k_.at(at * kv, n), n, pool.k(l).at(row * kv, n), n, 1, n);
                at += run;
            });
            pk.sink_k = sink_k_.at(0, std::size_t(keys.sinks) * kv);
            shift_keys(l, pk.sink_k, keys.sinks, shift);
        }
        be_.attention_paged(r.att, r.q, pool.k(l), pool.v(l), probs_target(l, p, i, want), T, seen,
                            config_.n_heads, config_.n_kv_heads, config_.head_dim(), causal, pk);
    } else {
        // Gathered into contiguous rows (dequantised from a quantised pool) through the table.
        const std::size_t need = std::size_t(keys.count) * kv;
        if (gather_k_.size() < need) {
            gather_k_ = DeviceBuffer(be_, grown(gather_k_.size(), need));
            gather_v_ = DeviceBuffer(be_, gather_k_.size());
        }
        through_table(cache, l, 0, keys.sinks, gather_k_.span(), gather_v_.span(), Way::FromBlocks);
        const std::size_t at = std::size_t(keys.sinks) * kv, rest = need - at;
        through_table(cache, l, keys.from, keys.count - keys.sinks, gather_k_.at(at, rest),
                      gather_v_.at(at, rest), Way::FromBlocks);
        if (shift > 0) shift_keys(l, gather_k_.span(), keys.sinks, shift);
        be_.attention(r.att, r.q, gather_k_.span(), gather_v_.span(), probs_target(l, p, i, want),
                      T, seen, config_.n_heads, config_.n_kv_heads, config_.head_dim(), causal);
    }
    keep_attention(l, p, i, want, r);
}

void TransformerRunner::through_table(const KvCache& cache, int l, int first, int n,
                                      DeviceSpan rows_k, DeviceSpan rows_v, Way way) {
    const std::size_t kv = config_.kv_dim();
    const KvBlockPool& pool = *cache.pool();
    for_each_block_run(cache.table(), pool.block_size(), first, n, [&](int p, int row, int run) {
        held_row(p, row, run);
        const std::size_t len = std::size_t(run) * kv, at = std::size_t(p - first) * kv;
        // A quantised pool dequantises as it loads and quantises as it stores.
        if (way == Way::FromBlocks)
            pool.load_rows(l, row, run, rows_k.at(at, len), rows_v.at(at, len));
        else
            pool.store_rows(l, row, run, rows_k.at(at, len), rows_v.at(at, len));
    });
}

// Cache rows first..first+n-1 of every layer: out [n_layers, 2 (K, V), n, kv_dim].
void TransformerRunner::read_rows(const KvCache& cache, int first, int n, std::vector<float>& out) {
    if (first < 0 || n < 0 || first + n > cache.len())
        throw Error("K/V rows " + std::to_string(first) + ".." + std::to_string(first + n - 1) +
                    " are not in the cache (" + std::to_string(cache.len()) + " rows)");
    const std::size_t kv = config_.kv_dim(), block = std::size_t(n) * kv;
    const std::size_t offset = std::size_t(first) * kv, layer = std::size_t(config_.seq_len) * kv;
    const ConstKvRows to{nullptr, config_.n_layers, n, config_.kv_dim()};  // out's layout
    const std::size_t total = to.size();
    out.resize(total);
    if (total == 0) return;
    // Gathered on the device as a step's captures are, then one download.
    ensure_scratch(0, 0, total);
    if (cache.paged()) {
        for (int l = 0; l < config_.n_layers; ++l)
            through_table(cache, l, first, n, captures_.at(to.offset(l, to.K), block),
                          captures_.at(to.offset(l, to.V), block), Way::FromBlocks);
    } else {
        be_.copy_rows(captures_.at(to.offset(0, to.K), 0), to.layer_floats(),
                      cache.k_all().at(offset, 0), layer, config_.n_layers, block);
        be_.copy_rows(captures_.at(to.offset(0, to.V), 0), to.layer_floats(),
                      cache.v_all().at(offset, 0), layer, config_.n_layers, block);
    }
    be_.download(host_.data(), captures_.at(0, total), total);
    std::memcpy(out.data(), host_.data(), total * sizeof(float));
}

}  // namespace kvs
