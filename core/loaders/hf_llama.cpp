#include "core/loaders/hf_llama.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/files/json_input.h"
#include "core/files/mapped_file.h"
#include "core/loaders/hf_gpt2.h"
#include "core/model/llama_model.h"
#include "core/model/rope_frequencies.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/tokenizers/spm_model_file.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxConfigBytes = std::size_t(1) << 20;
constexpr std::size_t kMaxShards = 1024;

bool is_regular(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

std::string shape_text(const std::vector<std::uint64_t>& s) {
    std::string t = "[";
    for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
}

}  // namespace

std::string hf_model_folder(const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    if (fs::is_directory(p, ec)) return is_regular(p / "config.json") ? p.string() : std::string();
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (p.filename() == "config.json" && is_regular(p)) return dir.string();
    if (p.extension() == ".safetensors" && is_regular(dir / "config.json")) return dir.string();
    return {};
}

HfLlama parse_hf_llama(std::string_view config_json, const std::vector<SafetensorsFile>& shards,
                       const std::string& name, const OpenLimits& limits, GgmlType weights,
                       std::shared_ptr<const void> keep, const ShardDoneWith& done_with) {
    auto fail = [&](const std::string& why) -> void {
        throw Error(name + ": Hugging Face Llama model: " + why);
    };
    const std::string model = name + ": Hugging Face Llama model";
    const auto j = parse_json_input(config_json, name + ": config.json");
    if (!j.is_object()) fail("config.json is not a JSON object");
    // A key's integer value, refused by name when absent (no fallback) or out of range.
    auto int_of = [&](const char* key, long fallback = -1) -> int {
        const nlohmann::json* v = json_member(j, key);
        if (!v) {
            if (fallback >= 0) return int(fallback);
            fail(std::string("config.json has no ") + key);
        }
        return int(json_int(*v, 0, 1 << 30, {model, std::string("config.json: ") + key}));
    };
    auto number_of = [&](const char* key, double fallback) {
        const nlohmann::json* v = json_member(j, key);
        if (!v) return fallback;
        if (!v->is_number())
            fail(std::string("config.json: ") + key + " = " + json_excerpt(*v, 40) +
                 " is not a number");
        return v->get<double>();
    };

    std::string arch = "?";
    if (const auto a = j.find("architectures");
        a != j.end() && a->is_array() && !a->empty() && (*a)[0].is_string())
        arch = (*a)[0].get<std::string>();
    const auto model_type = j.find("model_type");
    if (arch == "GPT2LMHeadModel" ||
        (arch == "?" && model_type != j.end() && *model_type == "gpt2"))
        return parse_hf_gpt2(config_json, shards, name, limits, weights, done_with);
    // Qwen2 is Llama with biases on q, k and v (and a sliding window kvscope does not have).
    const bool qwen2 = arch == "Qwen2ForCausalLM";
    if (arch != "LlamaForCausalLM" && !qwen2)
        fail("architecture '" + arch.substr(0, 60) +
             "' is not supported (kvscope runs LlamaForCausalLM, Qwen2ForCausalLM and "
             "GPT2LMHeadModel)");
    if (const auto it = j.find("use_sliding_window"); qwen2 && it != j.end() && *it == true)
        fail("use_sliding_window is true (kvscope's attention sees every earlier token)");
    for (const char* k : {"attention_bias", "mlp_bias"})
        if (const auto it = j.find(k); it != j.end() && *it == true)
            fail(std::string(k) + " is true (kvscope's Llama forward pass has no biases)");
    if (const auto it = j.find("hidden_act"); it != j.end() && *it != "silu")
        fail("hidden_act " + json_excerpt(*it, 40) + " is not supported (kvscope's FFN is SwiGLU)");

    ModelConfig c;
    c.qkv_bias = qwen2;
    // LlamaConfig's defaults when absent: base 10000, epsilon 1e-6 (ModelConfig::validate
    // bounds both).
    c.rope_theta = to_float(number_of("rope_theta", 10000.0));
    c.norm_eps = to_float(number_of("rms_norm_eps", 1e-6));
    c.dim = int_of("hidden_size");
    c.hidden_dim = int_of("intermediate_size");
    c.n_layers = int_of("num_hidden_layers");
    c.n_heads = int_of("num_attention_heads");
    c.n_kv_heads = int_of("num_key_value_heads", c.n_heads);
    c.vocab_size = int_of("vocab_size");
    c.seq_len = int_of("max_position_embeddings");
    // head_dim x heads as the file's numbers say, exactly (ints would wrap past 2^31 and could
    // land on hidden_size).
    if (json_member(j, "head_dim") && c.n_heads > 0) {
        const std::uint64_t head_dim = std::uint64_t(int_of("head_dim"));
        const std::uint64_t all =
            checked_mul(head_dim, std::uint64_t(c.n_heads),
                        {model, "config.json: head_dim x num_attention_heads"});
        if (all != std::uint64_t(c.dim))
            fail("head_dim " + std::to_string(head_dim) + " x " + std::to_string(c.n_heads) +
                 " heads is " + std::to_string(all) + ", not hidden_size " + std::to_string(c.dim));
    }
    bool tied = false;  // LlamaConfig's default
    if (const auto it = j.find("tie_word_embeddings"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean()) fail("config.json: tie_word_embeddings is not true or false");
        tied = it->get<bool>();
    }
    std::string context_note;
    if (c.seq_len > 0) c.seq_len = session_context(c.seq_len, limits.context, context_note);
    cut_context_to_kv_bound(c, context_note);
    c.shared_classifier = tied;
    c.validate(name, "Hugging Face model");
    if (c.head_dim() % 2) fail("the head size " + std::to_string(c.head_dim()) + " is odd");
    // Rope scaling: "linear" (every frequency divided by factor) and Llama 3's ("llama3");
    // the others (dynamic NTK, YaRN, LongRoPE) change more than the frequencies and are refused.
    if (const auto it = j.find("rope_scaling"); it != j.end() && !it->is_null()) {
        if (!it->is_object()) fail("config.json: rope_scaling is not an object");
        const auto& rs = *it;
        auto param = [&](const char* key, double fallback) {
            const nlohmann::json* p = json_member(rs, key);
            if (!p) {
                if (fallback >= 0) return fallback;
                fail(std::string("rope_scaling has no ") + key);
            }
            if (!p->is_number())
                fail(std::string("rope_scaling: ") + key + " = " + json_excerpt(*p, 40) +
                     " is not a number");
            return p->get<double>();
        };
        std::string type = "?";
        for (const char* k : {"rope_type", "type"})  // transformers' name, then the older one
            if (const auto t = rs.find(k); t != rs.end() && t->is_string()) {
                type = t->get<std::string>();
                break;
            }
        if (type == "linear") {
            const double factor = param("factor", -1);
            if (!(factor >= 1 && factor <= 1e6))
                fail("rope_scaling: linear factor " + json_excerpt(factor) +
                     " is not usable (1 to 1e6)");
            c.rope_factors.assign(c.head_dim() / 2, static_cast<float>(factor));
        } else if (type == "llama3") {
            // One at a time, so a missing one is named in this order.
            const double factor = param("factor", -1), low = param("low_freq_factor", -1),
                         high = param("high_freq_factor", -1),
                         original = param("original_max_position_embeddings", -1);
            try {
                c.rope_factors =
                    llama3_rope_factors(c.head_dim(), c.rope_theta, factor, low, high, original);
            } catch (const Error& e) {
                fail(e.what());
            }
        } else if (type != "default") {
            fail("rope_scaling type '" + type.substr(0, 40) +
                 "' is not supported (kvscope reads linear and llama3)");
        }
        c.validate(name, "Hugging Face model");
    }

    // Every tensor of every shard, by name: a name twice is refused.
    std::map<std::string, const SafeTensor*> all;
    for (const auto& s : shards)
        for (const auto& t : s.tensors())
            if (!all.emplace(t.name, &t).second) fail("tensor '" + t.name + "' is in two shards");

    const std::size_t d = c.dim, hd = c.hidden_dim, kv = c.kv_dim(), V = c.vocab_size;
    const std::size_t L = c.n_layers, head = c.head_dim();
    struct Slot {
        const SafeTensor* t;
        std::size_t at;       // float offset in the copy
        std::size_t permute;  // q, k: 1 (rows through rotate_half_row), else 0
    };
    std::vector<Slot> slots;
    std::size_t at = 0;
    std::set<std::string> used;
    std::map<std::string, int> type_counts;
    auto add = [&](const std::string& n, std::vector<std::uint64_t> shape, bool permute = false) {
        const auto it = all.find(n);
        if (it == all.end()) fail("no tensor '" + n + "'");
        if (it->second->shape != shape)
            fail("tensor '" + n + "' is " + shape_text(it->second->shape) + ", the shapes (" +
                 c.describe() + ") need " + shape_text(shape));
        used.insert(n);
        ++type_counts[ggml_type_name(it->second->type)];
        slots.push_back({it->second, at, permute ? 1u : 0u});
        std::size_t count = 1;
        for (auto x : shape) count *= x;
        at += count;
    };
    auto per_layer = [&](const char* n, std::vector<std::uint64_t> shape, bool permute = false) {
        for (std::size_t l = 0; l < L; ++l)
            add("model.layers." + std::to_string(l) + "." + n, shape, permute);
    };
    add("model.embed_tokens.weight", {V, d});
    per_layer("input_layernorm.weight", {d});
    per_layer("self_attn.q_proj.weight", {d, d}, true);
    per_layer("self_attn.k_proj.weight", {kv, d}, true);
    per_layer("self_attn.v_proj.weight", {kv, d});
    per_layer("self_attn.o_proj.weight", {d, d});
    per_layer("post_attention_layernorm.weight", {d});
    per_layer("mlp.gate_proj.weight", {hd, d});  // w1
    per_layer("mlp.down_proj.weight", {d, hd});  // w2
    per_layer("mlp.up_proj.weight", {hd, d});    // w3
    add("model.norm.weight", {d});
    const std::size_t cls_slot = tied ? 0 : slots.size();  // the classifier's slot
    if (!tied) add("lm_head.weight", {V, d});
    if (qwen2) {  // after the llama2.c tensors, as point_llama_weights takes them
        per_layer("self_attn.q_proj.bias", {d}, true);
        per_layer("self_attn.k_proj.bias", {kv}, true);
        per_layer("self_attn.v_proj.bias", {kv});
    }
    for (const auto& [n, t] : all) {
        (void)t;
        // Older exports store RoPE's frequencies; kvscope computes them.
        const bool inv_freq = n.size() > 8 && n.compare(n.size() - 8, 8, ".inv_freq") == 0;
        if (!used.count(n) && !inv_freq && !(tied && n == "lm_head.weight"))
            fail("tensor '" + n.substr(0, 80) + "' is not one of a " + arch +
                 " model's that kvscope runs");
    }

    check_fits(name, kept_weight_bytes(c, weights, std::uint64_t(at) * sizeof(float)), c, limits);

    // A matrix's rows in llama2.c's order: q and k through rotate_half_row.
    auto row_of = [&](const Slot& s, std::size_t r) {
        return s.permute ? rotate_half_row(r, head) : r;
    };
    auto slot_of = [&](MatrixKind k, int layer) -> const Slot& {
        // slots: embed, L norms, then L each of q k v o, L norms, L each of w1 w2 w3, norm, ...
        static constexpr std::size_t kBlock[] = {1, 2, 3, 4, 6, 7, 8};
        if (k == MatrixKind::wcls) return slots[cls_slot];
        return slots[1 + kBlock[int(k)] * L + std::size_t(layer)];
    };

    const bool compact = weights != GgmlType::F32;
    CompactWeights cw;
    auto side = std::make_shared<std::vector<std::vector<unsigned char>>>();
    if (compact) {
        auto source = [&](MatrixKind k, int layer) {
            const Slot& s = slot_of(k, layer);
            if (!s.permute) return MatrixBytes{s.t->type, s.t->data};
            // q, k: the rows put back in order, in the file's own type (a copy of this matrix).
            const std::size_t rows = s.t->shape[0], n = s.t->shape[1];
            const std::size_t rb = ggml_row_bytes(s.t->type, n);
            auto& buf = side->emplace_back(rows * rb);
            copy_rotate_half_rows(s.t->data, buf.data(), rows, rb, head, true);
            return MatrixBytes{s.t->type, buf.data()};
        };
        cw = make_compact_weights(
            c, weights, source,
            std::make_shared<std::pair<std::shared_ptr<const void>,
                                       std::shared_ptr<std::vector<std::vector<unsigned char>>>>>(
                std::move(keep), side));
    }

    std::shared_ptr<float[]> copy = zeroed_floats(at);
    std::set<const unsigned char*> in_place;  // tensors the compact matrices point into
    for (const auto* list : {&cw.wq, &cw.wk, &cw.wv, &cw.wo, &cw.w1, &cw.w2, &cw.w3})
        for (const CompactMatrix& m : *list) in_place.insert(m.data);
    if (compact) in_place.insert(cw.wcls.data);
    for (const auto& s : slots) {
        const bool matrix = s.t->shape.size() == 2 && &s != &slots[0];
        const std::size_t bytes = ggml_row_bytes(s.t->type, s.t->elements);
        if (compact && matrix) {  // kept compact: the float copy's pages stay untouched
            if (done_with && !in_place.count(s.t->data)) done_with(s.t->data, bytes);
            continue;
        }
        if (s.t->shape.size() == 1 && s.permute) {
            // q and k biases: their entries in llama2.c's order, as the rows of their matrices
            const std::size_t eb = ggml_row_bytes(s.t->type, 1);
            for (std::size_t r = 0; r < s.t->elements; ++r)
                dequantize_values(s.t->type, s.t->data + row_of(s, r) * eb, 1,
                                  copy.get() + s.at + r);
        } else if (s.t->shape.size() == 1) {
            dequantize_values(s.t->type, s.t->data, s.t->elements, copy.get() + s.at);
        } else {
            const std::size_t rows = s.t->shape[0], n = s.t->shape[1], rb = bytes / rows;
            for (std::size_t r = 0; r < rows; ++r)
                dequantize_values(s.t->type, s.t->data + row_of(s, r) * rb, n,
                                  copy.get() + s.at + r * n);
        }
        if (done_with && !in_place.count(s.t->data)) done_with(s.t->data, bytes);
    }

    HfLlama h;
    h.ck.config = c;
    point_llama_weights(h.ck.weights, copy.get(), c, false);
    h.ck.weights.owner = std::move(copy);
    h.ck.compact = std::move(cw);
    for (auto [key, out] : {std::pair{"bos_token_id", &h.bos}, std::pair{"eos_token_id", &h.eos}})
        if (const auto it = j.find(key); it != j.end() && it->is_number_unsigned() &&
                                         it->get<std::uint64_t>() < std::uint64_t(V))
            *out = int(it->get<std::uint64_t>());
    h.format = "Hugging Face " + arch + ", " + std::to_string(shards.size()) +
               (shards.size() == 1 ? " safetensors file" : " safetensors shards") + ", tensors:";
    for (const auto& [type, n] : type_counts)
        h.format.append(" ").append(std::to_string(n)).append(" ").append(type);
    h.format += compact ? ", matrices kept " + std::string(ggml_type_name(weights)) +
                              ", embeddings and norms dequantised to float32"
                        : ", q/k rows put back in llama2.c's RoPE order, float32 on load";
    h.format += context_note;
    return h;
}

std::unique_ptr<Model> load_hf_model(const std::string& path, const std::string& tokenizer,
                                     const OpenLimits& limits, GgmlType weights) {
    const std::string folder = hf_model_folder(path);
    if (folder.empty()) throw Error(path + ": not a Hugging Face model folder (no config.json)");
    const fs::path dir(folder);
    const auto config = read_file_bytes((dir / "config.json").string(), kMaxConfigBytes);

    // The shards: the index's weight_map files (each once), or model.safetensors.
    std::vector<std::string> files;
    std::error_code ec;
    // Present but not a regular file (a folder, a pipe): the readers below refuse it by name.
    if (fs::exists(dir / "model.safetensors.index.json", ec)) {
        const std::string index = (dir / "model.safetensors.index.json").string();
        const auto bytes = read_file_bytes(index, kMaxConfigBytes * 64);
        const auto j = parse_json_input(
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), index);
        const nlohmann::json* map = json_member(j, "weight_map");
        if (!map || !map->is_object())
            throw Error(index + ": not a safetensors index (no weight_map object)");
        std::set<std::string> seen;
        for (const auto& [tensor, file] : map->items()) {
            const FileField where{index, "weight_map[\"" + tensor.substr(0, 40) + "\"]"};
            // A shard is a file in this folder: a name, nothing that leads out of it or that the
            // C library would cut short (a NUL byte).
            check_file_name(json_string(file, where), where, folder);
            if (seen.insert(file.get<std::string>()).second)
                files.push_back(file.get<std::string>());
        }
        if (files.empty() || files.size() > kMaxShards)
            throw Error(index + ": " + std::to_string(files.size()) +
                        " shards (1 to 1024 are read)");
    } else if (fs::exists(dir / "model.safetensors", ec)) {
        files.push_back("model.safetensors");
    } else {
        throw Error(folder + ": no model.safetensors or model.safetensors.index.json");
    }
    std::vector<std::shared_ptr<const MappedFile>> maps;
    std::vector<SafetensorsFile> shards;
    for (const auto& f : files) {
        const std::string p = (dir / f).string();
        maps.push_back(MappedFile::open(p, kMaxModelFileBytes));
        shards.push_back(SafetensorsFile::parse(maps.back()->data(), maps.back()->size(), p));
    }
    auto keep = std::make_shared<std::vector<std::shared_ptr<const MappedFile>>>(maps);
    HfLlama h = parse_hf_llama(
        std::string_view(reinterpret_cast<const char*>(config.data()), config.size()), shards,
        folder, limits, weights, keep, [&maps](const unsigned char* p, std::size_t n) {
            for (const auto& m : maps)
                if (p >= m->data() && p < m->data() + m->size()) m->release(p, n);
        });
    keep.reset();
    maps.clear();  // float32 copies now, or compact matrices that keep the mappings themselves

    const int V = h.ck.config.vocab_size;
    std::string tok = tokenizer;
    if (tok.empty() && is_regular(dir / "tokenizer.bin")) tok = (dir / "tokenizer.bin").string();
    const std::string name = fs::path(folder).lexically_normal().filename().string();
    const auto ext = fs::path(tok).extension();
    if (!tok.empty() && ext != ".json" && ext != ".model") {
        BpeTokenizer t = BpeTokenizer::load(tok, V);
        return std::make_unique<LlamaModel>(
            std::move(h.ck), std::make_unique<BpeTokenizer>(std::move(t)),
            std::vector<int>{BpeTokenizer::kBos}, name,
            h.format + ", tokenizer " + fs::path(tok).filename().string());
    }
    // SentencePiece's own file (Llama 2's, TinyLlama's) before tokenizer.json: their
    // tokenizer.json is the SentencePiece-style one, which the byte-level reader refuses.
    if (tok.empty() && is_regular(dir / "tokenizer.model") && reads_sentencepiece_models())
        tok = (dir / "tokenizer.model").string();
    if (!tok.empty() && fs::path(tok).extension() == ".model") {
        auto t = std::make_unique<SpmTokenizer>(spm_tokenizer_from_model_file(tok, V));
        std::vector<int> stop;
        for (int id : {h.eos >= 0 ? h.eos : t->eos(), h.bos >= 0 ? h.bos : t->bos_id()})
            if (id >= 0 && (stop.empty() || stop[0] != id)) stop.push_back(id);
        return std::make_unique<LlamaModel>(std::move(h.ck), std::move(t), std::move(stop), name,
                                            h.format + ", tokenizer.model (SentencePiece)");
    }
    if (tok.empty() && is_regular(dir / "tokenizer.json")) tok = (dir / "tokenizer.json").string();
    if (tok.empty())
        throw Error(folder +
                    ": no tokenizer in the folder (looked for tokenizer.bin, tokenizer.model, "
                    "tokenizer.json); pass --tokenizer FILE");
    auto t = std::make_unique<ByteBpeTokenizer>(ByteBpeTokenizer::from_hf_json(tok));
    if (t->vocab_size() != V)
        throw Error(tok + ": " + std::to_string(t->vocab_size()) +
                    " tokens, the model's vocab_size is " + std::to_string(V));
    std::vector<int> stop;
    for (int id : {h.eos >= 0 ? h.eos : t->eos(), h.bos >= 0 ? h.bos : t->bos_id()})
        if (id >= 0 && (stop.empty() || stop[0] != id)) stop.push_back(id);
    return std::make_unique<LlamaModel>(std::move(h.ck), std::move(t), std::move(stop), name,
                                        h.format + ", tokenizer.json (byte-level BPE)");
}

}  // namespace kvs
