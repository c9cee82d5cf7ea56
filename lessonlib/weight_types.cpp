#include "lessonlib/weight_types.h"

#include <algorithm>
#include <chrono>

#include "core/loaders/memory_budget.h"
#include "core/model/compact_weights.h"
#include "core/util/error.h"

namespace kvs {
namespace {

// The model with every matrix kept as `t` (F32: expanded; none: as it is), or null when it does
// not fit in the host's memory beside this one (`why` says so).
std::unique_ptr<TransformerModel> variant(const TransformerModel& m, WeightsWanted want,
                                          std::string& why) {
    const ModelConfig& c = m.config();
    const CompactWeights& cw = m.compact();
    if (!want) return m.with_weights(Checkpoint{c, m.weights(), cw}, m.format());
    const GgmlType t = *want;
    const std::uint64_t need =
        t == GgmlType::F32 ? 4 * std::uint64_t(c.parameter_count())
                           : kept_weight_bytes(c, t, 4 * std::uint64_t(c.parameter_count()));
    const MemoryBudget host = host_memory_budget();
    if (host.bytes != 0 && need > host.bytes) {
        why = "needs " + std::to_string(need >> 20) + " MiB, " + std::to_string(host.bytes >> 20) +
              " MiB available";
        return nullptr;
    }
    Checkpoint ck;
    ck.config = c;
    if (t == GgmlType::F32) {
        ck.weights = cw.held() ? expand_to_float32(c, m.weights(), cw) : m.weights();
        return m.with_weights(std::move(ck), "float32");
    }
    // The matrices from where they are now: the model's compact bytes or its float32 views.
    const LlamaWeights& W = m.weights();
    auto source = [&](MatrixKind k, int layer) -> MatrixBytes {
        if (cw.held()) {
            const CompactMatrix* list[] = {cw.wq.data(), cw.wk.data(), cw.wv.data(), cw.wo.data(),
                                           cw.w1.data(), cw.w2.data(), cw.w3.data()};
            const CompactMatrix& cm = k == MatrixKind::wcls ? cw.wcls : list[int(k)][layer];
            return {cm.type, cm.data};
        }
        const auto [rows, n] = matrix_shape(c, k);
        const float* base[] = {W.wq, W.wk, W.wv, W.wo, W.w1, W.w2, W.w3, W.wcls};
        const float* p = base[int(k)] + (k == MatrixKind::wcls ? 0 : std::size_t(layer) * rows * n);
        return {GgmlType::F32, reinterpret_cast<const unsigned char*>(p)};
    };
    ck.weights = W;  // norms and the table as the model has them
    ck.compact =
        make_compact_weights(c, t, source, std::make_shared<Checkpoint>(Checkpoint{c, W, cw}));
    ck.compact.embedding = cw.embedding;  // a compact table stays as it is
    return m.with_weights(std::move(ck), weight_type_option_name(t));
}

}  // namespace

std::vector<WeightsWanted> panel_weight_types(const TransformerModel& m) {
    std::vector<WeightsWanted> out;
    if (m.compact().held()) out.push_back(std::nullopt);
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_K})
        out.push_back(t);
    return out;
}

std::vector<WeightTypeRun> measure_weight_types(const TransformerModel& m, Backend& be,
                                                const std::vector<WeightsWanted>& types, int steps,
                                                const std::function<void()>& between) {
    if (m.config().gpt2()) throw Error("the gpt2 architecture runs with float32 weights only");
    std::vector<WeightTypeRun> out;
    const std::vector<int> prompt = m.tokenizer().encode("Once upon a time");
    for (const WeightsWanted& t : types) {
        if (between) between();
        WeightTypeRun r;
        r.asked = t;
        const auto v = variant(m, t, r.not_run);
        if (!v) {
            out.push_back(r);
            continue;
        }
        r.kept = v->compact().held() ? v->compact().types() : "F32";
        r.bytes_per_token = weight_bytes_per_token(v->config(), v->compact());
        auto runner = v->make_runner(be);
        Capture want;
        want.attention = want.kv_rows = want.vectors = false;
        want.last_rows = 0;
        ForwardResult res;
        runner->forward(prompt, want, res);
        std::vector<double> times;
        int next = int(std::max_element(res.logits.begin(), res.logits.end()) - res.logits.begin());
        const int room = v->config().seq_len - int(prompt.size());
        for (int s = 0; s < std::min(steps, room); ++s) {
            if (between) between();
            const int one[1] = {next};
            const auto t0 = std::chrono::steady_clock::now();
            runner->forward(one, want, res);
            be.synchronize();
            times.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            next = int(std::max_element(res.logits.begin(), res.logits.end()) - res.logits.begin());
        }
        if (!times.empty()) {
            std::sort(times.begin(), times.end());
            r.step_seconds = times[times.size() / 2];
            r.steps = int(times.size());
        }
        out.push_back(r);
    }
    return out;
}

}  // namespace kvs
