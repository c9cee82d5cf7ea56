// A paged cache under the pass: its rows gathered through the block table into contiguous rows (a
// window's sinks and recent rows only) and the new rows put back into their blocks.
#include "core/model/transformer_runner.h"

namespace kvs {

TransformerRunner::SeenRows TransformerRunner::rows_seen(KvCache& cache, int l, int pos0) {
    if (!cache.paged()) return {cache.k(l), cache.v(l), pos0};
    // The sinks' rows, then the window's, gathered into contiguous rows [seen, kv_dim].
    const std::size_t kv = config_.kv_dim();
    const SeenRows out{gather_k_.span(), gather_v_.span(), 0};
    const CachedRowsSeen rows =
        cached_rows_seen(KeyMask{AttentionMask::Causal, sinks_, window_}, pos0);
    const int sinks = rows.sinks_end, from = rows.from;
    through_table(cache, l, 0, sinks, out.k, out.v, Way::FromBlocks);
    const std::size_t at = std::size_t(sinks) * kv;
    through_table(cache, l, from, pos0 - from, out.k.at(at, out.k.size - at),
                  out.v.at(at, out.v.size - at), Way::FromBlocks);
    return {out.k, out.v, sinks + pos0 - from};
}

void TransformerRunner::store_new_rows(KvCache& cache, int l, int pos0, int T, DeviceSpan k,
                                       DeviceSpan v, const SeenRows& seen) {
    through_table(cache, l, pos0, T, k, v, Way::ToBlocks);
    if (!cache.pool()->quantised()) return;
    // Attention reads the pass's own rows as the quantised cache holds them too, so a row's value
    // never depends on which pass computed it (a prompt in one pass or a row a pass, a shared
    // prefix, a preempted request computed again: the same rows).
    const std::size_t kv = config_.kv_dim();
    const std::size_t at = std::size_t(seen.n) * kv, n = std::size_t(T) * kv;
    through_table(cache, l, pos0, T, seen.k.at(at, n), seen.v.at(at, n), Way::FromBlocks);
}

void TransformerRunner::through_table(const KvCache& cache, int l, int first, int n,
                                      DeviceSpan rows_k, DeviceSpan rows_v, Way way) {
    const std::size_t kv = config_.kv_dim();
    const KvBlockPool& pool = *cache.pool();
    for_each_block_run(cache.table(), pool.block_size(), first, n, [&](int p, int row, int run) {
        if (row < 0) throw Error("K/V row " + std::to_string(p) + "'s block was let go");
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
