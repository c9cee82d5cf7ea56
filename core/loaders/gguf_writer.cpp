#include "core/loaders/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <deque>
#include <vector>

#include "core/loaders/tensor_slots.h"
#include "core/tokenizers/llama_vocab_rules.h"
#include "core/util/error.h"
#include "core/util/output_file.h"

namespace kvs {

namespace {
constexpr std::string_view kWrittenBy = "written by kvscope";
}  // namespace
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

// general.file_type: llama.cpp's llama_ftype for a file mostly of `type` (a K-quant as its
// "_S" file type: Q3_K_S, Q4_K_S, Q5_K_S; Q2_K and Q6_K have one each).
std::uint32_t llama_file_type(GgmlType type) {
    switch (type) {
        case GgmlType::F16:
            return 1;
        case GgmlType::Q4_0:
            return 2;
        case GgmlType::Q8_0:
            return 7;
        case GgmlType::Q2_K:
            return 10;
        case GgmlType::Q3_K:
            return 11;
        case GgmlType::Q4_K:
            return 14;
        case GgmlType::Q5_K:
            return 16;
        case GgmlType::Q6_K:
            return 18;
        case GgmlType::BF16:
            return 32;
        default:
            return 0;
    }
}

// One tensor's bytes in its type.
void encode_tensor(const Tensor& t, std::vector<unsigned char>& out) {
    std::size_t n = 1;
    for (auto d : t.dims) n *= d;
    out.assign(t.bytes, 0);
    encode_values(t.type, t.data, n, out.data());
}

// The tensors of the model's architecture table, in its order: fused parts joined, q and k rows
// in the file's order (`scratch`, which must outlive `ts`, holds those copies). Matrices
// (embeddings included) as `type`, vectors F32, as llama.cpp's converter keeps norms and biases.
void table_tensors(const ModelConfig& c, const LlamaWeights& w, GgmlType type,
                   std::vector<Tensor>& ts, std::deque<std::vector<float>>& scratch) {
    const ArchTable& t = arch_of(c);
    for (const TensorSlot& s : tensor_slots(t, c, FileFormat::gguf, &w)) {
        const float* data = s.to[0];
        if (s.to.size() > 1 || s.rope_rows) {
            const std::size_t part = s.elements() / s.to.size();
            std::vector<float> ours;
            ours.reserve(s.elements());
            for (const float* p : s.to) ours.insert(ours.end(), p, p + part);
            auto& out = scratch.emplace_back(s.elements());
            reorder_values(s, ours.data(), out.data(), c.head_dim(), true);
            data = out.data();
        }
        // A row that is not whole blocks of the type gets the fallback (compact_weights.h).
        const GgmlType kept = s.dims.size() == 2 ? kept_type(type, s.dims[0]) : GgmlType::F32;
        ts.push_back({s.name, s.dims, data, kept});
    }
    // Rope scaling as llama.cpp reads Llama 3's: one divisor per RoPE pair, float32.
    if (t.positions == PositionKind::rope && !c.rope_factors.empty())
        ts.push_back({"rope_freqs.weight",
                      {std::uint64_t(c.rope_factors.size())},
                      c.rope_factors.data(),
                      GgmlType::F32});
}

}  // namespace

OutputKind gguf_output() {
    return {"GGUF file", [](std::string_view head) {
                // "GGUF", version 3, tensor and key counts, then two string keys.
                std::size_t at = 24;
                const auto u64 = [&](std::uint64_t& v) {
                    if (at + 8 > head.size()) return false;
                    std::memcpy(&v, head.data() + at, 8);
                    at += 8;
                    return true;
                };
                const auto str = [&](std::string_view& s) {
                    std::uint64_t n = 0;
                    if (!u64(n) || n > 256 || at + n > head.size()) return false;
                    s = head.substr(at, n);
                    at += n;
                    return true;
                };
                const auto string_kv = [&](std::string_view key, std::string_view& value) {
                    std::string_view k;
                    std::uint32_t type = 0;
                    if (!str(k) || k != key || at + 4 > head.size()) return false;
                    std::memcpy(&type, head.data() + at, 4);
                    at += 4;
                    return type == std::uint32_t(GgufValueType::STRING) && str(value);
                };
                std::uint32_t version = 0;
                if (head.size() < 24 || !head.starts_with("GGUF")) return false;
                std::memcpy(&version, head.data() + 4, 4);
                std::string_view arch, description;
                return version == 3 && string_kv("general.architecture", arch) &&
                       string_kv("general.description", description) && description == kWrittenBy;
            }};
}

GgufWritten write_gguf_llama(const std::string& path, const ModelConfig& c, const LlamaWeights& w,
                             const BpeTokenizer& tok, GgmlType type,
                             const std::string& model_name) {
    check_output_path(path, gguf_output());
    std::vector<Tensor> ts;
    std::deque<std::vector<float>> reordered;  // stable addresses for the tensors' floats
    table_tensors(c, w, type, ts, reordered);
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
    const ArchTable& table = arch_of(c);
    const std::string arch = table.gguf_name;
    const bool learned = table.positions == PositionKind::learned;
    kv_str("general.architecture", arch);
    kv_str("general.description", kWrittenBy);  // second: gguf_output() knows the file by it
    kv_str("general.name", model_name);
    kv_u32("general.alignment", kAlignment);
    kv_u32("general.file_type", llama_file_type(type));
    // GPT-2's context is its position table's rows (the session's may be shorter).
    kv_u32(arch + ".context_length", learned ? c.n_positions : c.seq_len);
    kv_u32(arch + ".embedding_length", c.dim);
    kv_u32(arch + ".block_count", c.n_layers);
    kv_u32(arch + ".feed_forward_length", c.hidden_dim);
    if (!learned) kv_u32(arch + ".rope.dimension_count", c.head_dim());
    kv_u32(arch + ".attention.head_count", c.n_heads);
    if (learned) {  // GPT-2: LayerNorm's epsilon; no RoPE, as many kv heads as heads
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

    GgufWritten done;
    static_cast<Written&>(done) = write_output_file(
        path,
        [&](const OutputSink& put) {
            put(head.b);
            std::vector<unsigned char> buf;
            const std::string zeros(kAlignment, '\0');
            for (const auto& t : ts) {
                encode_tensor(t, buf);
                put(std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()));
                put(std::string_view(zeros.data(),
                                     (kAlignment - t.bytes % kAlignment) % kAlignment));
            }
        },
        gguf_output());
    for (const auto& t : ts)
        if (t.dims.size() == 2) done.matrices.push_back({t.type, t.dims[0]});
    return done;
}

}  // namespace kvs
