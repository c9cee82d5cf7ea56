#include "core/loaders/gguf_llama.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/files/mapped_file.h"
#include "core/loaders/gguf_gpt2.h"
#include "core/loaders/hf_llama.h"
#include "core/model/llama_model.h"
#include "core/tokenizers/gguf_tokenizer.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace {

int shape_value(const GgufFile& f, const std::string& key, int fallback = -1) {
    const auto v = f.get_uint(key);
    if (!v) {
        if (fallback >= 0) return fallback;
        throw Error(f.name() + ": GGUF llama model: no metadata '" + key + "'");
    }
    return static_cast<int>(checked_uint(*v, 1u << 30, {f.name() + ": GGUF llama model", key}));
}

// A float hyper-parameter, `fallback` when absent (ModelConfig::validate bounds it).
float float_value(const GgufFile& f, const std::string& key, float fallback) {
    const auto v = f.get_float(key);
    return v ? to_float(*v) : fallback;
}

std::string dims_text(const std::vector<std::uint64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

}  // namespace

bool is_gguf_file(const std::string& path) {
    const auto head = read_file_head(path, 4);
    return head.size() == 4 && head[0] == 'G' && head[1] == 'G' && head[2] == 'U' && head[3] == 'F';
}

GgufLlama parse_gguf_llama(const unsigned char* data, std::size_t size, const std::string& name,
                           const GgufDoneWith& done_with, const OpenLimits& limits,
                           WeightsWanted weights, std::shared_ptr<const void> keep) {
    const GgufFile f = GgufFile::parse(data, size, name);
    auto fail = [&](const std::string& why) -> void {
        throw Error(name + ": GGUF llama model: " + why);
    };
    const auto arch = f.get_string("general.architecture");
    if (!arch) fail("no general.architecture");
    // GPT-2 runs float32 weights only: as stored means dequantised there.
    if (*arch == "gpt2")
        return parse_gguf_gpt2(f, done_with, limits, weights.value_or(GgmlType::F32));
    // qwen2 is llama with q/k/v biases, and its q/k rows in the rotate-half order of its NEOX
    // RoPE (convert_hf_to_gguf permutes llama's to adjacent pairs, not qwen2's).
    const bool qwen2 = *arch == "qwen2";
    if (*arch != "llama" && !qwen2)
        fail("architecture '" + std::string(*arch).substr(0, 40) +
             "' is not supported (kvscope runs 'llama', 'qwen2' and 'gpt2')");
    const std::string key = std::string(*arch) + ".";  // the metadata's prefix
    const GgufTensorInfo* emb = f.tensor("token_embd.weight");
    if (!emb || emb->dims.size() != 2) fail("no 2-D tensor 'token_embd.weight'");

    ModelConfig c;
    c.dim = shape_value(f, key + "embedding_length");
    c.hidden_dim = shape_value(f, key + "feed_forward_length");
    c.n_layers = shape_value(f, key + "block_count");
    c.n_heads = shape_value(f, key + "attention.head_count");
    c.n_kv_heads = shape_value(f, key + "attention.head_count_kv", c.n_heads);
    c.seq_len = shape_value(f, key + "context_length");
    c.vocab_size = static_cast<int>(checked_uint(
        emb->dims[1], ModelConfig::kMaxVocab,
        {name + ": GGUF llama model", "token_embd.weight's rows"}, "a vocabulary size"));
    c.shared_classifier = f.tensor("output.weight") == nullptr;
    c.qkv_bias = qwen2;
    // RoPE's base and RMSNorm's epsilon: llama.cpp's defaults when absent (10000, 1e-5).
    c.rope_theta = float_value(f, key + "rope.freq_base", 10000.0f);
    c.norm_eps = float_value(f, key + "attention.layer_norm_rms_epsilon", 1e-5f);
    // Rope scaling: linear (every frequency divided by the factor), or Llama 3's per-pair
    // divisors in the tensor rope_freqs.weight (read below, once the head size is checked).
    if (const auto st = f.get_string(key + "rope.scaling.type"); st && *st != "none") {
        if (*st != "linear")
            fail(key + "rope.scaling.type '" + std::string(*st).substr(0, 40) +
                 "' is not supported (kvscope reads none, linear, and rope_freqs)");
        const float factor = float_value(f, key + "rope.scaling.factor", 1.0f);
        if (factor != 1.0f && c.dim > 0 && c.n_heads > 0 && c.dim % c.n_heads == 0)
            c.rope_factors.assign(c.head_dim() / 2, factor);
    }
    const GgufTensorInfo* rope_freqs = f.tensor("rope_freqs.weight");
    if (rope_freqs && c.dim > 0 && c.n_heads > 0 && c.dim % c.n_heads == 0) {
        if (!c.rope_factors.empty()) fail("both linear rope scaling and rope_freqs.weight");
        if (rope_freqs->dims != std::vector<std::uint64_t>{std::uint64_t(c.head_dim() / 2)})
            fail("tensor 'rope_freqs.weight' is " + dims_text(rope_freqs->dims) +
                 ", one divisor per RoPE pair needs [" + std::to_string(c.head_dim() / 2) + "]");
        c.rope_factors.resize(c.head_dim() / 2);
        dequantize(*rope_freqs, c.rope_factors.data());
    }
    // The context the user chose, when shorter: the KV cache is allocated for that, not more.
    std::string context_note;
    if (c.seq_len > 0) c.seq_len = session_context(c.seq_len, limits.context, context_note);
    cut_context_to_kv_bound(c, context_note);
    c.validate(name, "GGUF file");
    if (const auto rd = f.get_uint(key + "rope.dimension_count");
        rd && *rd != std::uint64_t(c.head_dim()))
        fail(key + "rope.dimension_count = " + std::to_string(*rd) + " is not the head size " +
             std::to_string(c.head_dim()) + " (partial RoPE is not supported)");

    // Where each tensor goes in llama2.c's order, and its GGUF shape ([in, out] for a matrix).
    const std::size_t d = c.dim, hd = c.hidden_dim, kv = c.kv_dim(), V = c.vocab_size;
    const std::size_t L = c.n_layers;
    struct Slot {
        std::string name;
        std::vector<std::uint64_t> dims;
        std::size_t at;  // float offset in the copy
    };
    std::vector<Slot> slots;
    std::size_t at = 0;
    auto add = [&](const std::string& n, std::vector<std::uint64_t> dims) {
        std::size_t count = 1;
        for (auto x : dims) count *= x;
        slots.push_back({n, std::move(dims), at});
        at += count;
    };
    auto per_layer = [&](const char* n, std::vector<std::uint64_t> dims) {
        for (std::size_t l = 0; l < L; ++l) add("blk." + std::to_string(l) + "." + n, dims);
    };
    add("token_embd.weight", {d, V});
    per_layer("attn_norm.weight", {d});
    per_layer("attn_q.weight", {d, d});
    per_layer("attn_k.weight", {d, kv});
    per_layer("attn_v.weight", {d, kv});
    per_layer("attn_output.weight", {d, d});
    per_layer("ffn_norm.weight", {d});
    per_layer("ffn_gate.weight", {d, hd});  // w1
    per_layer("ffn_down.weight", {hd, d});  // w2
    per_layer("ffn_up.weight", {d, hd});    // w3
    add("output_norm.weight", {d});
    if (!c.shared_classifier) add("output.weight", {d, V});
    if (qwen2) {  // after the llama2.c tensors, as point_llama_weights takes them
        per_layer("attn_q.bias", {d});
        per_layer("attn_k.bias", {kv});
        per_layer("attn_v.bias", {kv});
    }
    // qwen2's q and k rows (weights and biases) are put back in llama2.c's order.
    auto rotate_half = [&](const std::string& n) {
        return qwen2 &&
               (n.find(".attn_q.") != std::string::npos || n.find(".attn_k.") != std::string::npos);
    };

    std::set<std::string_view> used;
    if (rope_freqs) used.insert(rope_freqs->name);
    std::map<std::string, int> type_counts;
    for (const auto& s : slots) {
        const GgufTensorInfo* t = f.tensor(s.name);
        if (!t) fail("no tensor '" + s.name + "'");
        if (t->dims != s.dims)
            fail("tensor '" + s.name + "' is " + dims_text(t->dims) + ", the shapes (" +
                 c.describe() + ") need " + dims_text(s.dims));
        used.insert(t->name);
        ++type_counts[ggml_type_name(t->type)];
    }
    for (const auto& t : f.tensors())
        if (!used.count(t.name))
            fail("tensor '" + std::string(t.name) + "' is not one of a " + std::string(*arch) +
                 " model's that kvscope runs");

    // Each matrix's tensor name, and (as stored) the type it is kept in.
    auto tensor_of = [&](MatrixKind k, int layer) -> const GgufTensorInfo& {
        static constexpr const char* kNames[] = {"attn_q",   "attn_k",   "attn_v", "attn_output",
                                                 "ffn_gate", "ffn_down", "ffn_up"};
        if (k == MatrixKind::embedding || (k == MatrixKind::wcls && c.shared_classifier))
            return *f.tensor("token_embd.weight");
        if (k == MatrixKind::wcls) return *f.tensor("output.weight");
        return *f.tensor("blk." + std::to_string(layer) + "." + kNames[int(k)] + ".weight");
    };
    const std::uint64_t float32_bytes = std::uint64_t(at) * sizeof(float);
    const std::uint64_t kept_bytes =
        weights ? kept_weight_bytes(c, *weights, float32_bytes)
                : kept_weight_bytes(c, float32_bytes,
                                    [&](MatrixKind k, int l) { return tensor_of(k, l).type; });
    // Before anything is copied: the weights as they will be kept (float32, or the matrices
    // compact) and the KV cache must fit where they go.
    check_fits(name, kept_bytes, c, limits);

    // Compact weights: the matrices in the file's own types (as stored) or in the type asked
    // for, the file's own bytes where it has them so (kept alive by `keep`), converted otherwise;
    // the float32 copy then holds only the norms (and the embedding table, unless it is kept
    // too): the matrices' floats are never read, zero pages, untouched.
    CompactWeights cw;
    std::set<const unsigned char*> in_place;  // tensors the compact matrices point into
    const std::size_t head = c.head_dim();
    if (weights != GgmlType::F32) {
        // qwen2's q and k: their rows put back in order, in the file's own type (copies)
        auto side = std::make_shared<std::vector<std::vector<unsigned char>>>();
        auto source = [&](MatrixKind k, int layer) {
            const GgufTensorInfo& t = tensor_of(k, layer);
            if (!rotate_half(std::string(t.name))) return MatrixBytes{t.type, t.data};
            const std::size_t rows = t.dims[1], rb = ggml_row_bytes(t.type, t.dims[0]);
            auto& buf = side->emplace_back(rows * rb);
            copy_rotate_half_rows(t.data, buf.data(), rows, rb, head, true);
            return MatrixBytes{t.type, buf.data()};
        };
        cw = make_compact_weights(
            c, weights, source,
            std::make_shared<std::pair<std::shared_ptr<const void>,
                                       std::shared_ptr<std::vector<std::vector<unsigned char>>>>>(
                std::move(keep), side));
        for (const CompactMatrix& m : cw.all()) in_place.insert(m.data);
        if (cw.embedding.data) in_place.insert(cw.embedding.data);
    }
    const bool compact = cw.held();
    auto is_matrix = [](const Slot& s) {
        return s.dims.size() == 2 && s.name != "token_embd.weight";
    };

    // Every tensor was checked against the file's bytes, so this copy is at most ~7 x the file
    // (Q4_0: 32 floats from 18 bytes). With compact weights it holds only what is not kept
    // compact (the norms, qwen2's biases, a float32 embedding table), one after another in the
    // slots' order, and the views of the kept matrices stay null: the forward pass reads those
    // through CompactWeights.
    auto kept = [&](const Slot& s) {
        return (compact && is_matrix(s)) || (cw.embedding.data && s.name == "token_embd.weight");
    };
    std::map<std::string, std::size_t> at_in_copy;
    std::size_t copy_floats = 0;
    for (const auto& s : slots) {
        if (kept(s)) continue;
        at_in_copy[s.name] = copy_floats;
        std::size_t count = 1;
        for (auto x : s.dims) count *= x;
        copy_floats += count;
    }
    std::shared_ptr<float[]> copy = zeroed_floats(copy_floats);
    for (const auto& s : slots) {
        const GgufTensorInfo& t = *f.tensor(s.name);
        if (!kept(s)) {
            float* p = copy.get() + at_in_copy[s.name];
            dequantize(t, p);
            if (rotate_half(s.name)) {
                // rows (or a bias's entries) of qwen2's q and k into llama2.c's order
                const std::size_t rows = s.dims.back(), n = s.dims.size() == 2 ? s.dims[0] : 1;
                const std::vector<float> file_order(p, p + rows * n);
                copy_rotate_half_rows(file_order.data(), p, rows, n * sizeof(float), head, true);
            }
        }
        if (done_with && !in_place.count(t.data))
            done_with(t.data, static_cast<std::size_t>(t.bytes));
    }

    GgufTokenizer gt = tokenizer_from_gguf(f, c.vocab_size);
    GgufLlama g{Checkpoint{}, std::move(gt.tok), std::move(gt.stop), {}};
    g.ck.config = c;
    LlamaWeights& W = g.ck.weights;
    if (!compact) {
        point_llama_weights(W, copy.get(), c, false);
    } else {
        auto view = [&](const std::string& n) -> const float* {
            const auto it = at_in_copy.find(n);
            return it == at_in_copy.end() ? nullptr : copy.get() + it->second;
        };
        W.all = std::span<const float>(copy.get(), copy_floats);
        W.token_embedding = view("token_embd.weight");
        W.rms_att = view("blk.0.attn_norm.weight");  // a kind's layers are consecutive slots
        W.rms_ffn = view("blk.0.ffn_norm.weight");
        W.rms_final = view("output_norm.weight");
        W.wcls = c.shared_classifier ? W.token_embedding : view("output.weight");
        if (qwen2) {
            W.bq = view("blk.0.attn_q.bias");
            W.bk = view("blk.0.attn_k.bias");
            W.bv = view("blk.0.attn_v.bias");
        }
    }
    W.owner = std::move(copy);
    g.ck.compact = std::move(cw);
    g.format = "GGUF v" + std::to_string(f.version()) + ", " + std::string(*arch) + ", tensors:";
    for (const auto& [type, n] : type_counts)
        g.format.append(" ").append(std::to_string(n)).append(" ").append(type);
    if (compact)
        g.format +=
            ", matrices kept " +
            (weights ? "as " + weight_type_option_name(*weights) : std::string("as stored")) +
            " (" + g.ck.compact.types() + "; " + std::to_string(in_place.size()) +
            " tensors used in place), " +
            (g.ck.compact.embedding.data
                 ? "embedding table kept " +
                       std::string(ggml_type_name(g.ck.compact.embedding.type)) +
                       ", norms dequantised to float32"
                 : "embeddings and norms dequantised to float32") +
            context_note;
    else
        g.format += ", dequantised to float32 on load" + context_note;
    return g;
}

std::unique_ptr<Model> load_gguf_model(const std::string& path, const std::string& model_name,
                                       const OpenLimits& limits, WeightsWanted weights) {
    auto map = MappedFile::open(path, kMaxModelFileBytes);
    GgufLlama g = parse_gguf_llama(
        map->data(), map->size(), path,
        [&map](const unsigned char* p, std::size_t n) { map->release(p, n); }, limits, weights,
        map);
    map.reset();  // float32 copies now, or compact matrices that keep the mapping themselves
    return make_gguf_model(std::move(g), model_name);
}

std::unique_ptr<Model> make_gguf_model(GgufLlama g, const std::string& model_name) {
    return std::make_unique<LlamaModel>(std::move(g.ck), std::move(g.tok), std::move(g.stop),
                                        model_name, std::move(g.format));
}

}  // namespace kvs
