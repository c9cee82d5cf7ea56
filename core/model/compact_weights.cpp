#include "core/model/compact_weights.h"

#include <algorithm>
#include <cctype>

#include "core/files/kquant_blocks.h"
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
        case MatrixKind::embedding:
            return {V, d};
    }
    return {0, 0};
}

const float* float_matrix(const ModelConfig& c, const LlamaWeights& w, MatrixKind k, int layer) {
    const float* base = nullptr;
    switch (k) {
        case MatrixKind::wq:
            base = w.wq;
            break;
        case MatrixKind::wk:
            base = w.wk;
            break;
        case MatrixKind::wv:
            base = w.wv;
            break;
        case MatrixKind::wo:
            base = w.wo;
            break;
        case MatrixKind::w1:
            base = w.w1;
            break;
        case MatrixKind::w2:
            base = w.w2;
            break;
        case MatrixKind::w3:
            base = w.w3;
            break;
        case MatrixKind::wcls:
            base = w.wcls;
            break;
        case MatrixKind::embedding:
            base = w.token_embedding;
            break;
    }
    if (!base) return nullptr;
    const auto [rows, n] = matrix_shape(c, k);
    return base + std::size_t(layer) * rows * n;
}

GgmlType weight_type_from_name(const std::string& name) {
    try {
        return ggml_type_from_name(name);  // the GGUF writer's one name parser
    } catch (const Error&) {
    }
    std::string list;
    for (const auto& n : encodable_type_names()) list += (list.empty() ? "" : ", ") + n;
    throw Error("--weights: '" + name + "' is not one of " + list);
}

std::string weight_type_option_name(GgmlType t) {
    std::string n = ggml_type_name(t);
    for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return n;
}

std::string weights_wanted_name(const WeightsWanted& w) {
    return w ? weight_type_option_name(*w) : "as stored";
}

GgmlType kept_type(GgmlType want, std::size_t n) {
    GgmlType t = want;
    if (n % ggml_block_elements(t) != 0 && is_kquant(t))
        t = t == GgmlType::Q5_K || t == GgmlType::Q6_K || t == GgmlType::Q8_K ? GgmlType::Q8_0
                                                                              : GgmlType::Q4_0;
    return n % ggml_block_elements(t) == 0 ? t : GgmlType::F16;
}

namespace {

// What owns the bytes: converted copies, and whatever keeps the in-place sources alive.
struct Store {
    std::shared_ptr<const void> keep;
    std::vector<std::vector<unsigned char>> copies;
};

// The list of a layer kind in `cw` (CompactWeights or a const one); null for wcls and embedding.
template <class Weights>
auto layer_list(Weights& cw, MatrixKind k) -> decltype(&cw.wq) {
    switch (k) {
        case MatrixKind::wq:
            return &cw.wq;
        case MatrixKind::wk:
            return &cw.wk;
        case MatrixKind::wv:
            return &cw.wv;
        case MatrixKind::wo:
            return &cw.wo;
        case MatrixKind::w1:
            return &cw.w1;
        case MatrixKind::w2:
            return &cw.w2;
        case MatrixKind::w3:
            return &cw.w3;
        case MatrixKind::wcls:
        case MatrixKind::embedding:
            break;
    }
    return nullptr;
}

}  // namespace

std::vector<CompactMatrix> CompactWeights::all() const {
    std::vector<CompactMatrix> out;
    for (MatrixKind k : kLayerMatrixKinds) {
        const auto& list = *layer_list(*this, k);
        out.insert(out.end(), list.begin(), list.end());
    }
    if (held()) out.push_back(wcls);
    return out;
}

std::vector<CompactMatrix>* CompactWeights::layers(MatrixKind k) {
    return layer_list(*this, k);
}

CompactMatrix CompactWeights::matrix(MatrixKind k, int layer) const {
    if (k == MatrixKind::wcls) return wcls;
    if (k == MatrixKind::embedding) return embedding;
    const auto* list = layer_list(*this, k);
    return list->empty() ? CompactMatrix{} : (*list)[layer];
}

std::string CompactWeights::types() const {
    std::vector<GgmlType> types;
    for (const CompactMatrix& m : all()) types.push_back(m.type);
    return ggml_type_counts(types);
}

CompactWeights make_compact_weights(const ModelConfig& c, WeightsWanted want,
                                    const MatrixSource& source, std::shared_ptr<const void> keep,
                                    const SourceDoneWith& done_with) {
    CompactWeights cw;
    if (want == GgmlType::F32) return cw;
    if (!want) {  // as stored: nothing to keep compact when everything is float32 already
        bool any = source(MatrixKind::embedding, 0).type != GgmlType::F32 ||
                   source(MatrixKind::wcls, 0).type != GgmlType::F32;
        for (MatrixKind k : kLayerMatrixKinds)
            for (int l = 0; l < c.n_layers && !any; ++l) any = source(k, l).type != GgmlType::F32;
        if (!any) return cw;
    }
    auto store = std::make_shared<Store>();
    store->keep = std::move(keep);
    std::vector<float> floats;  // one matrix dequantised, when it must be re-encoded
    auto one = [&](MatrixKind k, int layer) {
        const auto [rows, n] = matrix_shape(c, k);
        const MatrixBytes src = source(k, layer);
        const GgmlType t = want ? kept_type(*want, n) : src.type;
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
    for (MatrixKind k : kLayerMatrixKinds)
        for (int l = 0; l < c.n_layers; ++l) cw.layers(k)->push_back(one(k, l));
    cw.wcls = one(MatrixKind::wcls, 0);
    if (!want) {  // the file's own table, when quantised: a token dequantises its one row
        const MatrixBytes e = source(MatrixKind::embedding, 0);
        if (e.type != GgmlType::F32) cw.embedding = CompactMatrix{e.type, e.data};
    }
    cw.owner = std::move(store);
    return cw;
}

CompactWeights compact_from_floats(const ModelConfig& c, const LlamaWeights& w, GgmlType want,
                                   const SourceDoneWith& done_with) {
    auto source = [&](MatrixKind k, int layer) {
        const float* p = float_matrix(c, w, k, layer);
        return MatrixBytes{GgmlType::F32, reinterpret_cast<const unsigned char*>(p)};
    };
    return make_compact_weights(c, want, source, nullptr, done_with);
}

std::uint64_t weight_bytes_read(const ModelConfig& c, const CompactWeights& cw, int T) {
    // Every weight once in its kept type, less what a pass reads only a row of per token: the
    // embedding table where it is not also the classifier, and GPT-2's position table.
    std::uint64_t b = kept_parameter_bytes(c, cw);
    const std::uint64_t rows = std::uint64_t(std::max(T, 0));
    const std::uint64_t row =
        cw.embedding.data ? ggml_row_bytes(cw.embedding.type, c.dim) : std::uint64_t(c.dim) * 4;
    if (!c.shared_classifier) b -= std::uint64_t(c.vocab_size) * row;
    b += rows * row;
    if (c.gpt2()) b = b - std::uint64_t(c.n_positions) * c.dim * 4 + rows * c.dim * 4;
    return b;
}

LlamaWeights expand_to_float32(const ModelConfig& c, const LlamaWeights& M,
                               const CompactWeights& cw) {
    const std::size_t freq = 2 * std::size_t(c.seq_len) * (c.head_dim() / 2);
    auto store = std::make_shared<std::vector<float>>(c.stored_floats() - (c.gpt2() ? 0 : freq));
    LlamaWeights E;
    point_llama_weights(E, store->data(), c, false);
    auto copy = [](const float* from, const float* to, std::size_t n) {
        if (from && from != to) std::copy(from, from + n, const_cast<float*>(to));
    };
    const std::size_t d = c.dim, kv = c.kv_dim(), hd = c.hidden_dim, L = c.n_layers,
                      V = c.vocab_size;
    copy(M.norm_att, E.norm_att, L * d);
    copy(M.norm_ffn, E.norm_ffn, L * d);
    copy(M.norm_final, E.norm_final, d);
    if (c.qkv_bias) {
        copy(M.bq, E.bq, L * d);
        copy(M.bk, E.bk, L * kv);
        copy(M.bv, E.bv, L * kv);
    }
    copy(M.token_embedding, E.token_embedding, V * d);
    const bool kept = cw.held();
    if (!kept) {  // a float32 model: its matrices as they are
        copy(M.wq, E.wq, L * d * d), copy(M.wk, E.wk, L * kv * d), copy(M.wv, E.wv, L * kv * d);
        copy(M.wo, E.wo, L * d * d), copy(M.w1, E.w1, L * hd * d), copy(M.w2, E.w2, L * d * hd);
        copy(M.w3, E.w3, L * hd * d);
        if (!c.shared_classifier) copy(M.wcls, E.wcls, V * d);
    }
    auto put = [&](const CompactMatrix& m, const float* at, MatrixKind k) {
        const auto [rows, n] = matrix_shape(c, k);
        if (m.data) dequantize_values(m.type, m.data, rows * n, const_cast<float*>(at));
    };
    for (MatrixKind k : kLayerMatrixKinds)
        for (int l = 0; kept && l < c.n_layers; ++l)
            put(cw.matrix(k, l), float_matrix(c, E, k, l), k);
    put(cw.embedding, E.token_embedding, MatrixKind::embedding);
    if (kept && !c.shared_classifier) put(cw.wcls, E.wcls, MatrixKind::wcls);
    E.owner = std::move(store);
    return E;
}

std::uint64_t kept_parameter_bytes(const ModelConfig& c, const CompactWeights& cw) {
    std::uint64_t b = 4 * std::uint64_t(c.parameter_count());
    if (!cw.held()) return b;
    for (MatrixKind k : kLayerMatrixKinds) {
        const auto [rows, n] = matrix_shape(c, k);
        b -= 4 * std::uint64_t(c.n_layers) * rows * n;
    }
    const std::uint64_t table = std::uint64_t(c.vocab_size) * c.dim;
    b -= 4 * table;  // the classifier (a shared one: the table), in cw.bytes as kept
    b += cw.bytes;
    if (!c.shared_classifier && cw.embedding.data)
        b = b - 4 * table + c.vocab_size * ggml_row_bytes(cw.embedding.type, c.dim);
    return b;
}

std::uint64_t kept_weight_bytes(const ModelConfig& c, std::uint64_t float32_bytes,
                                const KeptTypes& kept) {
    std::uint64_t floats_out = 0, kept_in = 0;
    auto add = [&](MatrixKind k, int layer, bool has_own_floats) {
        const auto [rows, n] = matrix_shape(c, k);
        kept_in += std::uint64_t(rows) * ggml_row_bytes(kept(k, layer), n);
        if (has_own_floats) floats_out += std::uint64_t(rows) * n * sizeof(float);
    };
    for (MatrixKind k : kLayerMatrixKinds)
        for (int l = 0; l < c.n_layers; ++l) add(k, l, true);
    // A shared classifier is the embedding table: float32 in the copy, or kept compact once.
    const bool table_kept = kept(MatrixKind::embedding, 0) != GgmlType::F32;
    if (!c.shared_classifier || !table_kept) add(MatrixKind::wcls, 0, !c.shared_classifier);
    if (table_kept) add(MatrixKind::embedding, 0, true);
    return (float32_bytes > floats_out ? float32_bytes - floats_out : 0) + kept_in;
}

std::uint64_t kept_weight_bytes(const ModelConfig& c, GgmlType want, std::uint64_t float32_bytes) {
    if (want == GgmlType::F32) return float32_bytes;
    return kept_weight_bytes(c, float32_bytes, [&](MatrixKind k, int) {
        return k == MatrixKind::embedding ? GgmlType::F32
                                          : kept_type(want, matrix_shape(c, k).second);
    });
}

}  // namespace kvs
