#include "core/model/compact_weights.h"

#include <cctype>

#include "core/model/llama_weights.h"
#include "core/util/error.h"

namespace kvs {

std::pair<std::size_t, std::size_t> matrix_shape(const ModelConfig& c, MatrixKind k) {
    const std::size_t d = c.dim, kv = c.kv_dim(), hd = c.hidden_dim, V = c.vocab_size;
    switch (k) {
        case MatrixKind::wq:
        case MatrixKind::wo:
            return {d, d};
        case MatrixKind::wk:
        case MatrixKind::wv:
            return {kv, d};
        case MatrixKind::w1:
        case MatrixKind::w3:
            return {hd, d};
        case MatrixKind::w2:
            return {d, hd};
        case MatrixKind::wcls:
            return {V, d};
    }
    return {0, 0};
}

GgmlType weight_type_from_name(const std::string& name) {
    // The GGUF writer's one name parser; Q4_0 is a file type only here (not kept in memory).
    try {
        const GgmlType t = ggml_type_from_name(name);
        if (t != GgmlType::Q4_0) return t;
    } catch (const Error&) {
    }
    throw Error("--weights: '" + name + "' is not one of f32, f16, bf16, q8_0");
}

std::string weight_type_option_name(GgmlType t) {
    std::string n = ggml_type_name(t);
    for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return n;
}

GgmlType kept_type(GgmlType want, std::size_t n) {
    return n % ggml_block_elements(want) == 0 ? want : GgmlType::F16;
}

namespace {

// What owns the bytes: converted copies, and whatever keeps the in-place sources alive.
struct Store {
    std::shared_ptr<const void> keep;
    std::vector<std::vector<unsigned char>> copies;
};

}  // namespace

CompactWeights make_compact_weights(const ModelConfig& c, GgmlType want, const MatrixSource& source,
                                    std::shared_ptr<const void> keep,
                                    const SourceDoneWith& done_with) {
    CompactWeights cw;
    if (want == GgmlType::F32) return cw;
    if (want != GgmlType::F16 && want != GgmlType::BF16 && want != GgmlType::Q8_0)
        throw Error(std::string("weights cannot be kept as ") + ggml_type_name(want));
    auto store = std::make_shared<Store>();
    store->keep = std::move(keep);
    std::vector<float> floats;  // one matrix dequantised, when it must be re-encoded
    auto one = [&](MatrixKind k, int layer) {
        const auto [rows, n] = matrix_shape(c, k);
        const MatrixBytes src = source(k, layer);
        const GgmlType t = kept_type(want, n);
        cw.bytes += rows * ggml_row_bytes(t, n);
        if (src.type == t) return CompactMatrix{t, src.data};
        const float* values = reinterpret_cast<const float*>(src.data);
        if (src.type != GgmlType::F32) {
            floats.resize(rows * n);
            dequantize_values(src.type, src.data, rows * n, floats.data());
            values = floats.data();
        }
        auto& out = store->copies.emplace_back(rows * ggml_row_bytes(t, n));
        encode_values(t, values, rows * n, out.data());
        if (done_with) done_with(src.data, rows * ggml_row_bytes(src.type, n));
        return CompactMatrix{t, out.data()};
    };
    for (auto [kind, list] : {std::pair{MatrixKind::wq, &cw.wq},
                              {MatrixKind::wk, &cw.wk},
                              {MatrixKind::wv, &cw.wv},
                              {MatrixKind::wo, &cw.wo},
                              {MatrixKind::w1, &cw.w1},
                              {MatrixKind::w2, &cw.w2},
                              {MatrixKind::w3, &cw.w3}})
        for (int l = 0; l < c.n_layers; ++l) list->push_back(one(kind, l));
    cw.wcls = one(MatrixKind::wcls, 0);
    cw.type = want;
    cw.owner = std::move(store);
    return cw;
}

CompactWeights compact_from_floats(const ModelConfig& c, const LlamaWeights& w, GgmlType want,
                                   const SourceDoneWith& done_with) {
    auto source = [&](MatrixKind k, int layer) {
        const auto [rows, n] = matrix_shape(c, k);
        const float* base = k == MatrixKind::wq   ? w.wq
                            : k == MatrixKind::wk ? w.wk
                            : k == MatrixKind::wv ? w.wv
                            : k == MatrixKind::wo ? w.wo
                            : k == MatrixKind::w1 ? w.w1
                            : k == MatrixKind::w2 ? w.w2
                            : k == MatrixKind::w3 ? w.w3
                                                  : w.wcls;
        const float* p = base + std::size_t(layer) * rows * n;
        return MatrixBytes{GgmlType::F32, reinterpret_cast<const unsigned char*>(p)};
    };
    return make_compact_weights(c, want, source, nullptr, done_with);
}

std::uint64_t weight_bytes_per_token(const ModelConfig& c, const CompactWeights& cw) {
    std::uint64_t matrices = 0;
    if (cw.held()) {
        matrices = cw.bytes;
    } else {
        for (MatrixKind k : {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv, MatrixKind::wo,
                             MatrixKind::w1, MatrixKind::w2, MatrixKind::w3}) {
            const auto [rows, n] = matrix_shape(c, k);
            matrices += std::uint64_t(c.n_layers) * rows * n * 4;
        }
        const auto [rows, n] = matrix_shape(c, MatrixKind::wcls);
        matrices += std::uint64_t(rows) * n * 4;
    }
    const std::uint64_t norms = (2 * std::uint64_t(c.n_layers) + 1) * c.dim * 4;
    return matrices + std::uint64_t(c.dim) * 4 + norms;
}

std::uint64_t kept_weight_bytes(const ModelConfig& c, GgmlType want, std::uint64_t float32_bytes) {
    if (want == GgmlType::F32) return float32_bytes;
    std::uint64_t floats_out = 0, kept_in = 0;
    auto add = [&](MatrixKind k, int count, bool has_own_floats) {
        const auto [rows, n] = matrix_shape(c, k);
        kept_in += std::uint64_t(count) * rows * ggml_row_bytes(kept_type(want, n), n);
        if (has_own_floats) floats_out += std::uint64_t(count) * rows * n * sizeof(float);
    };
    for (MatrixKind k : {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv, MatrixKind::wo,
                         MatrixKind::w1, MatrixKind::w2, MatrixKind::w3})
        add(k, c.n_layers, true);
    // A shared classifier is the embedding table, which stays float32 as well.
    add(MatrixKind::wcls, 1, !c.shared_classifier);
    return (float32_bytes > floats_out ? float32_bytes - floats_out : 0) + kept_in;
}

}  // namespace kvs
