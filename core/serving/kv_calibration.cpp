#include "core/serving/kv_calibration.h"

#include <algorithm>
#include <cmath>

#include "core/model/kv_rows.h"
#include "core/util/error.h"

namespace kvs {

KvScales calibrate_kv_scales(const Model& model, Backend& backend,
                             std::span<const std::vector<int>> prompts, KvCacheType type,
                             KvScaleMode mode) {
    if (mode == KvScaleMode::Token || type == KvCacheType::F32)
        throw Error("a cache whose scales are found row by row has none to calibrate");
    const ModelConfig& c = model.config();
    const int L = c.n_layers, kv = c.kv_dim();
    auto runner = model.make_batch_runner(backend, 1);
    if (!runner) throw Error(model.name() + " has no batched forward pass to calibrate with");
    // The largest |x|: [L] for V (and K per tensor), [L, kv_dim] for K per channel.
    const bool per_channel = mode == KvScaleMode::ChannelK;
    std::vector<float> k_max(per_channel ? std::size_t(L) * kv : L, 0.0f), v_max(L, 0.0f);
    Capture want{false, true, -1, false, true, false, false, false};  // every K/V row, no more
    for (const std::vector<int>& p : prompts) {
        runner->reset_slot(0);
        ForwardResult out;
        const SeqInput in{0, p};
        runner->forward_batch(std::span<const SeqInput>(&in, 1), want,
                              std::span<ForwardResult>(&out, 1));
        const ConstKvRows rows{out.kv_rows.data(), L, out.kv_rows_kept, kv};
        for (int l = 0; l < L; ++l)
            for (int r = 0; r < rows.rows; ++r) {
                const auto k = rows.row(l, rows.K, r), v = rows.row(l, rows.V, r);
                for (int i = 0; i < kv; ++i) {
                    float& m = k_max[per_channel ? std::size_t(l) * kv + i : l];
                    m = std::max(m, std::fabs(k[i]));
                    v_max[l] = std::max(v_max[l], std::fabs(v[i]));
                }
            }
    }
    KvScales s;
    float unused;
    for (float m : k_max) s.k.push_back(kv_scale_for(type, m, &unused));
    if (!per_channel)
        for (float m : v_max) s.v.push_back(kv_scale_for(type, m, &unused));
    return s;
}

}  // namespace kvs
