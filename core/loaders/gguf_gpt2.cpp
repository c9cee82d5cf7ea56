#include "core/loaders/gguf_gpt2.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/files/gguf_file.h"
#include "core/files/mapped_file.h"
#include "core/model/compact_weights.h"
#include "core/tokenizers/gguf_tokenizer.h"
#include "core/util/checked.h"
#include "core/util/error.h"

namespace kvs {
namespace {

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
    throw Error(name + ": GGUF gpt2 model: " + why);
}

std::string dims_text(const std::vector<std::uint64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

// One GGUF tensor and where its values go: split into to.size() equal consecutive parts (the
// fused q/k/v tensors: q's, k's, v's), each at its own place in the weights.
struct Slot {
    std::string name;
    std::vector<std::uint64_t> dims;  // GGUF order
    std::vector<const float*> to;     // empty when no weights were given
};

using View = const float* LlamaWeights::*;

// Every tensor of a GPT-2 file of shapes `c`, in the order they are written; `w` (when given)
// says where each one's values are in our weights. The one statement of the GGUF layout: the
// reader copies into these places, the writer reads from them.
std::vector<Slot> gpt2_slots(const ModelConfig& c, const LlamaWeights* w) {
    const std::uint64_t d = c.dim, hd = c.hidden_dim, V = c.vocab_size;
    std::vector<Slot> slots;
    // `to`: each part's view and its offset in floats from the view's start.
    auto add = [&](std::string n, std::vector<std::uint64_t> dims,
                   std::initializer_list<std::pair<View, std::uint64_t>> to) {
        Slot s{std::move(n), std::move(dims), {}};
        if (w)
            for (const auto& [view, off] : to) s.to.push_back(w->*view + off);
        slots.push_back(std::move(s));
    };
    add("token_embd.weight", {d, V}, {{&LlamaWeights::token_embedding, 0}});
    add("position_embd.weight", {d, std::uint64_t(c.n_positions)},
        {{&LlamaWeights::pos_embedding, 0}});
    for (std::uint64_t l = 0; l < std::uint64_t(c.n_layers); ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", {d}, {{&LlamaWeights::rms_att, l * d}});
        add(b + "attn_norm.bias", {d}, {{&LlamaWeights::norm_att_bias, l * d}});
        add(b + "attn_qkv.weight", {d, 3 * d},
            {{&LlamaWeights::wq, l * d * d},
             {&LlamaWeights::wk, l * d * d},
             {&LlamaWeights::wv, l * d * d}});
        add(b + "attn_qkv.bias", {3 * d},
            {{&LlamaWeights::bq, l * d}, {&LlamaWeights::bk, l * d}, {&LlamaWeights::bv, l * d}});
        add(b + "attn_output.weight", {d, d}, {{&LlamaWeights::wo, l * d * d}});
        add(b + "attn_output.bias", {d}, {{&LlamaWeights::bo, l * d}});
        add(b + "ffn_norm.weight", {d}, {{&LlamaWeights::rms_ffn, l * d}});
        add(b + "ffn_norm.bias", {d}, {{&LlamaWeights::norm_ffn_bias, l * d}});
        add(b + "ffn_up.weight", {d, hd}, {{&LlamaWeights::w1, l * hd * d}});
        add(b + "ffn_up.bias", {hd}, {{&LlamaWeights::b1, l * hd}});
        add(b + "ffn_down.weight", {hd, d}, {{&LlamaWeights::w2, l * d * hd}});
        add(b + "ffn_down.bias", {d}, {{&LlamaWeights::b2, l * d}});
    }
    add("output_norm.weight", {d}, {{&LlamaWeights::rms_final, 0}});
    add("output_norm.bias", {d}, {{&LlamaWeights::norm_final_bias, 0}});
    if (!c.shared_classifier) add("output.weight", {d, V}, {{&LlamaWeights::wcls, 0}});
    return slots;
}

std::uint64_t elements(const std::vector<std::uint64_t>& dims) {
    std::uint64_t n = 1;
    for (auto x : dims) n *= x;
    return n;
}

}  // namespace

GgufLlama parse_gguf_gpt2(const GgufFile& f, const GgufDoneWith& done_with,
                          const OpenLimits& limits, GgmlType weights) {
    const std::string& name = f.name();
    if (weights != GgmlType::F32)
        refuse(name, "--weights " + weight_type_option_name(weights) +
                         ": the gpt2 architecture runs with float32 weights only");
    const std::string model = name + ": GGUF gpt2 model";
    // A size from the metadata; `fallback` (when not negative) if absent.
    auto size_of = [&](const std::string& key, int fallback = -1) {
        const auto v = f.get_uint(key);
        if (!v) {
            if (fallback < 0) refuse(name, "no metadata '" + key + "'");
            return fallback;
        }
        return static_cast<int>(checked_uint(*v, 1u << 30, {model, key}));
    };
    const GgufTensorInfo* emb = f.tensor("token_embd.weight");
    if (!emb || emb->dims.size() != 2) refuse(name, "no 2-D tensor 'token_embd.weight'");

    ModelConfig c;
    c.arch = Architecture::Gpt2;
    c.qkv_bias = true;
    c.dim = size_of("gpt2.embedding_length");
    c.hidden_dim = size_of("gpt2.feed_forward_length");
    c.n_layers = size_of("gpt2.block_count");
    c.n_heads = size_of("gpt2.attention.head_count");
    c.n_kv_heads = size_of("gpt2.attention.head_count_kv", c.n_heads);
    // Learned positions: the context is the position table's rows, at most.
    c.n_positions = size_of("gpt2.context_length");
    if (c.n_positions == 0)
        refuse(name, "gpt2.context_length is 0 (the position table needs a row per position)");
    c.seq_len = c.n_positions;
    c.vocab_size =
        static_cast<int>(checked_uint(emb->dims[1], ModelConfig::kMaxVocab,
                                      {model, "token_embd.weight's rows"}, "a vocabulary size"));
    c.shared_classifier = f.tensor("output.weight") == nullptr;
    const auto eps = f.get_float("gpt2.attention.layer_norm_epsilon");
    c.norm_eps = eps ? to_float(*eps) : 1e-5f;  // llama.cpp's default; validate bounds it
    // The context the user chose, when shorter: the KV cache is allocated for that, not more.
    std::string context_note;
    c.seq_len = session_context(c.seq_len, limits.context, context_note);
    cut_context_to_kv_bound(c, context_note);
    c.validate(name, "GGUF file");

    const std::vector<Slot> wanted = gpt2_slots(c, nullptr);
    std::set<std::string_view> used;
    std::map<std::string, int> type_counts;
    for (const auto& s : wanted) {
        const GgufTensorInfo* t = f.tensor(s.name);
        if (!t) refuse(name, "no tensor '" + s.name + "'");
        if (t->dims != s.dims)
            refuse(name, "tensor '" + s.name + "' is " + dims_text(t->dims) + ", the shapes (" +
                             c.describe() + ") need " + dims_text(s.dims));
        used.insert(t->name);
        ++type_counts[ggml_type_name(t->type)];
    }
    for (const auto& t : f.tensors())
        if (!used.count(t.name))
            refuse(name, "tensor '" + std::string(t.name) +
                             "' is not one of a gpt2 model's that kvscope runs");
    // Before anything is copied: the float32 weights and the KV cache must fit where they go.
    check_fits(name, std::uint64_t(c.stored_floats()) * sizeof(float), c, limits);
    GgufTokenizer gt = tokenizer_from_gguf(f, c.vocab_size);

    // Every tensor was checked against the file's bytes, so this copy is at most ~7 x the file
    // (Q4_0: 32 floats from 18 bytes).
    std::shared_ptr<float[]> copy = zeroed_floats(c.stored_floats());
    GgufLlama g{Checkpoint{}, std::move(gt.tok), std::move(gt.stop), {}};
    g.ck.config = c;
    point_llama_weights(g.ck.weights, copy.get(), c, false);
    auto writable = [&](const float* p) { return copy.get() + (p - copy.get()); };
    std::vector<float> fused;
    for (const auto& s : gpt2_slots(c, &g.ck.weights)) {
        const GgufTensorInfo& t = *f.tensor(s.name);
        if (s.to.size() == 1) {
            dequantize(t, writable(s.to[0]));
        } else {  // q's rows (or entries), then k's, then v's
            fused.resize(t.elements);
            dequantize(t, fused.data());
            const std::size_t part = t.elements / s.to.size();
            for (std::size_t i = 0; i < s.to.size(); ++i)
                std::copy_n(fused.data() + i * part, part, writable(s.to[i]));
        }
        if (done_with) done_with(t.data, static_cast<std::size_t>(t.bytes));
    }
    g.ck.weights.owner = std::move(copy);
    g.format = "GGUF v" + std::to_string(f.version()) + ", gpt2, tensors:";
    for (const auto& [type, n] : type_counts)
        g.format.append(" ").append(std::to_string(n)).append(" ").append(type);
    g.format += ", q/k/v split from attn_qkv, dequantised to float32 on load" + context_note;
    return g;
}

std::vector<GgufTensorOut> gguf_gpt2_tensors(const ModelConfig& c, const LlamaWeights& w,
                                             GgmlType type,
                                             std::deque<std::vector<float>>& scratch) {
    std::vector<GgufTensorOut> out;
    for (const auto& s : gpt2_slots(c, &w)) {
        const float* data = s.to[0];
        if (s.to.size() > 1) {  // attn_qkv: q's part, k's, v's, one after the other
            const std::size_t part = elements(s.dims) / s.to.size();
            auto& buf = scratch.emplace_back();
            buf.reserve(part * s.to.size());
            for (const float* p : s.to) buf.insert(buf.end(), p, p + part);
            data = buf.data();
        }
        // Matrices (embeddings included) as `type`, F16 where a row is not whole blocks of it;
        // vectors F32, as llama.cpp's converter keeps norms and biases.
        const GgmlType t = s.dims.size() == 2 ? kept_type(type, s.dims[0]) : GgmlType::F32;
        out.push_back({s.name, s.dims, data, t});
    }
    return out;
}

}  // namespace kvs
