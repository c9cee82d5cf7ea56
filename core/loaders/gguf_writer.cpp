#include "core/loaders/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <deque>
#include <vector>

#include "core/loaders/gguf_gpt2.h"
#include "core/loaders/hf_llama.h"
#include "core/tokenizers/llama_vocab_rules.h"
#include "core/util/error.h"
#include "core/util/output_file.h"

namespace kvs {
namespace {

constexpr std::uint32_t kAlignment = 32;

// Little-endian bytes of the header, metadata and tensor infos.
struct Bytes {
    std::string b;
    template <class T>
    void put(T v) {
        char raw[sizeof v];
        std::memcpy(raw, &v, sizeof v);
        b.append(raw, sizeof v);
    }
    void str(std::string_view s) {
        put<std::uint64_t>(s.size());
        b.append(s);
    }
    void key(std::string_view k, GgufValueType t) {
        str(k);
        put(static_cast<std::uint32_t>(t));
    }
};

struct Tensor {
    std::string name;
    std::vector<std::uint64_t> dims;  // GGUF order: [in, out] for a matrix
    const float* data;
    GgmlType type;
    std::size_t bytes = 0;
    std::uint64_t offset = 0;
};

std::string gguf_piece(const BpeTokenizer& tok, int id) {
    if (id == 0) return "<unk>";
    if (id == BpeTokenizer::kBos) return "<s>";
    if (id == BpeTokenizer::kEos) return "</s>";
    std::string out;
    for (char ch : tok.piece(id))
        out += ch == ' ' ? std::string("\xE2\x96\x81") : std::string(1, ch);
    return out;
}

// SentencePiece piece types (core/tokenizers/spm_tokenizer.h): 1 normal, 2 unknown, 3 control, 6
// byte.
std::int32_t gguf_piece_type(const BpeTokenizer& tok, int id) {
    if (id == 0) return 2;
    if (id == BpeTokenizer::kBos || id == BpeTokenizer::kEos) return 3;
    const std::string p = tok.piece(id);
    if (p.size() == 6 && byte_of_piece(p) == id - BpeTokenizer::kByteBase) return 6;
    return 1;
}

// One tensor's bytes in its type.
void encode_tensor(const Tensor& t, std::vector<unsigned char>& out) {
    std::size_t n = 1;
    for (auto d : t.dims) n *= d;
    out.assign(t.bytes, 0);
    encode_values(t.type, t.data, n, out.data());
}

// The `llama` (or, with q/k/v biases, `qwen2`) tensors of a llama2.c-ordered model; q and k rows
// reordered for qwen2 into `reordered`, which must outlive `ts`.
void llama_tensors(const ModelConfig& c, const LlamaWeights& w, GgmlType type,
                   std::vector<Tensor>& ts, std::deque<std::vector<float>>& reordered) {
    const std::uint64_t d = c.dim, hd = c.hidden_dim, kv = c.kv_dim(), V = c.vocab_size;
    auto matrix = [&](std::string n, std::uint64_t in, std::uint64_t out, const float* p) {
        // A row that is not whole blocks of the type gets the fallback (compact_weights.h).
        const GgmlType t = kept_type(type, in);
        ts.push_back({std::move(n), {in, out}, p, t});
    };
    auto vec = [&](std::string n, const float* p, std::uint64_t len) {
        ts.push_back({std::move(n), {len}, p, GgmlType::F32});
    };
    // qwen2 (a model with q/k/v biases) keeps q and k in HF's rotate-half order, which its NEOX
    // RoPE wants; llama's are llama2.c's adjacent pairs, as stored. `rows` rows of n floats.
    const bool qwen2 = c.qkv_bias;
    auto q_or_k = [&](const float* p, std::uint64_t rows, std::uint64_t n) -> const float* {
        if (!qwen2) return p;
        auto& out = reordered.emplace_back(rows * n);
        copy_rotate_half_rows(p, out.data(), rows, n * sizeof(float), c.head_dim(), false);
        return out.data();
    };
    matrix("token_embd.weight", d, V, w.token_embedding);
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        vec(b + "attn_norm.weight", w.rms_att + l * d, d);
        matrix(b + "attn_q.weight", d, d, q_or_k(w.wq + l * d * d, d, d));
        matrix(b + "attn_k.weight", d, kv, q_or_k(w.wk + l * kv * d, kv, d));
        matrix(b + "attn_v.weight", d, kv, w.wv + l * kv * d);
        matrix(b + "attn_output.weight", d, d, w.wo + l * d * d);
        vec(b + "ffn_norm.weight", w.rms_ffn + l * d, d);
        matrix(b + "ffn_gate.weight", d, hd, w.w1 + l * hd * d);
        matrix(b + "ffn_down.weight", hd, d, w.w2 + l * d * hd);
        matrix(b + "ffn_up.weight", d, hd, w.w3 + l * hd * d);
    }
    vec("output_norm.weight", w.rms_final, d);
    if (!c.shared_classifier) matrix("output.weight", d, V, w.wcls);
    if (qwen2)
        for (int l = 0; l < c.n_layers; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            vec(b + "attn_q.bias", q_or_k(w.bq + l * d, d, 1), d);
            vec(b + "attn_k.bias", q_or_k(w.bk + l * kv, kv, 1), kv);
            vec(b + "attn_v.bias", w.bv + l * kv, kv);
        }
    // Rope scaling as llama.cpp reads Llama 3's: one divisor per RoPE pair, float32.
    if (!c.rope_factors.empty())
        ts.push_back({"rope_freqs.weight",
                      {std::uint64_t(c.rope_factors.size())},
                      c.rope_factors.data(),
                      GgmlType::F32});
}

}  // namespace

Written write_gguf_llama(const std::string& path, const ModelConfig& c, const LlamaWeights& w,
                         const BpeTokenizer& tok, GgmlType type, const std::string& model_name) {
    check_output_path(path);
    std::vector<Tensor> ts;
    std::deque<std::vector<float>> reordered;  // stable addresses for the tensors' floats
    if (c.gpt2())
        for (auto& t : gguf_gpt2_tensors(c, w, type, reordered))
            ts.push_back({std::move(t.name), std::move(t.dims), t.data, t.type});
    else
        llama_tensors(c, w, type, ts, reordered);
    std::uint64_t offset = 0;
    for (auto& t : ts) {
        std::size_t n = 1;
        for (auto x : t.dims) n *= x;
        t.bytes = n / ggml_block_elements(t.type) * ggml_block_bytes(t.type);
        t.offset = offset;
        offset += (t.bytes + kAlignment - 1) / kAlignment * kAlignment;
    }

    Bytes h;
    const auto u32 = GgufValueType::U32;
    std::uint64_t n_kv = 0;
    auto kv_u32 = [&](std::string_view k, std::uint32_t v) { h.key(k, u32), h.put(v), ++n_kv; };
    auto kv_f32 = [&](std::string_view k, float v) {
        h.key(k, GgufValueType::F32), h.put(v), ++n_kv;
    };
    auto kv_str = [&](std::string_view k, std::string_view v) {
        h.key(k, GgufValueType::STRING), h.str(v), ++n_kv;
    };
    auto kv_bool = [&](std::string_view k, bool v) {
        h.key(k, GgufValueType::BOOL), h.put<std::uint8_t>(v), ++n_kv;
    };
    const std::string arch = c.gpt2() ? "gpt2" : c.qkv_bias ? "qwen2" : "llama";
    kv_str("general.architecture", arch);
    kv_str("general.name", model_name);
    kv_u32("general.alignment", kAlignment);
    // llama.cpp's file types: 0 all F32, 1 mostly F16, 2 mostly Q4_0, 7 mostly Q8_0, 32 BF16.
    kv_u32("general.file_type", type == GgmlType::F32    ? 0
                                : type == GgmlType::F16  ? 1
                                : type == GgmlType::Q4_0 ? 2
                                : type == GgmlType::Q8_0 ? 7
                                                         : 32);
    // GPT-2's context is its position table's rows (the session's may be shorter).
    kv_u32(arch + ".context_length", c.gpt2() ? c.n_positions : c.seq_len);
    kv_u32(arch + ".embedding_length", c.dim);
    kv_u32(arch + ".block_count", c.n_layers);
    kv_u32(arch + ".feed_forward_length", c.hidden_dim);
    if (!c.gpt2()) kv_u32(arch + ".rope.dimension_count", c.head_dim());
    kv_u32(arch + ".attention.head_count", c.n_heads);
    if (c.gpt2()) {  // LayerNorm's epsilon; no RoPE, as many kv heads as heads
        kv_f32(arch + ".attention.layer_norm_epsilon", c.norm_eps);
    } else {
        kv_u32(arch + ".attention.head_count_kv", c.n_kv_heads);
        kv_f32(arch + ".attention.layer_norm_rms_epsilon", c.norm_eps);
        kv_f32(arch + ".rope.freq_base", c.rope_theta);
    }
    kv_u32(arch + ".vocab_size", c.vocab_size);
    kv_str("tokenizer.ggml.model", "llama");
    const int nv = tok.vocab_size();
    h.key("tokenizer.ggml.tokens", GgufValueType::ARRAY), ++n_kv;
    h.put(static_cast<std::uint32_t>(GgufValueType::STRING)), h.put<std::uint64_t>(nv);
    for (int i = 0; i < nv; ++i) h.str(gguf_piece(tok, i));
    h.key("tokenizer.ggml.scores", GgufValueType::ARRAY), ++n_kv;
    h.put(static_cast<std::uint32_t>(GgufValueType::F32)), h.put<std::uint64_t>(nv);
    for (int i = 0; i < nv; ++i) h.put(tok.score(i));
    h.key("tokenizer.ggml.token_type", GgufValueType::ARRAY), ++n_kv;
    h.put(static_cast<std::uint32_t>(GgufValueType::I32)), h.put<std::uint64_t>(nv);
    for (int i = 0; i < nv; ++i) h.put(gguf_piece_type(tok, i));
    kv_u32("tokenizer.ggml.unknown_token_id", 0);
    kv_u32("tokenizer.ggml.bos_token_id", BpeTokenizer::kBos);
    kv_u32("tokenizer.ggml.eos_token_id", BpeTokenizer::kEos);
    kv_bool("tokenizer.ggml.add_bos_token", true);
    kv_bool("tokenizer.ggml.add_eos_token", false);
    kv_bool("tokenizer.ggml.add_space_prefix", true);

    for (const auto& t : ts) {
        h.str(t.name);
        h.put(static_cast<std::uint32_t>(t.dims.size()));
        for (auto x : t.dims) h.put(x);
        h.put(static_cast<std::uint32_t>(t.type));
        h.put(t.offset);
    }
    Bytes head;
    head.b = "GGUF";
    head.put<std::uint32_t>(3);
    head.put<std::uint64_t>(ts.size());
    head.put<std::uint64_t>(n_kv);
    head.b += h.b;
    head.b.resize((head.b.size() + kAlignment - 1) / kAlignment * kAlignment, '\0');

    return write_output_file(path, [&](const OutputSink& put) {
        put(head.b);
        std::vector<unsigned char> buf;
        const std::string zeros(kAlignment, '\0');
        for (const auto& t : ts) {
            encode_tensor(t, buf);
            put(std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()));
            put(std::string_view(zeros.data(), (kAlignment - t.bytes % kAlignment) % kAlignment));
        }
    });
}

}  // namespace kvs
