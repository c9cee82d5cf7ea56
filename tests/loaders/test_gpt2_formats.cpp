// GPT-2's file formats: a GPT-2-shaped model (random weights, the default model's
// shapes and tokenizer) written as GGUF (architecture gpt2, llama.cpp's names, fused attn_qkv)
// and as a Hugging Face GPT2LMHeadModel folder (Conv1D matrices [in, out], fused c_attn), read
// back: F32 as the same floats bit for bit (and the same logits), F16/BF16/Q8_0 within their
// rounding. The layouts are checked against the files' own bytes, not only by the round trip
// (a reader and a writer sharing one mistake would pass that), and hostile files are refused
// with one line naming what is wrong. The forward pass itself: tests/test_gpt2.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/files/gguf_file.h"
#include "core/files/safetensors_file.h"
#include "core/loaders/gguf_llama.h"
#include "core/loaders/gguf_writer.h"
#include "core/loaders/hf_llama.h"
#include "core/loaders/hf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "tests/support/gpt2_model.h"
#include "tests/support/greedy_runs.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {

const std::string kPrompt = "Once upon a time";

const BpeTokenizer& bpe(const Model& m) {
    return dynamic_cast<const BpeTokenizer&>(m.tokenizer());
}

const TransformerModel& llama(const Model& m) {
    return dynamic_cast<const TransformerModel&>(m);
}

// The random GPT-2 model with a separate classifier: its weights copied, lm_head appended (the
// classifier is the last tensor of the layout) as the embedding table negated.
std::unique_ptr<TransformerModel> untied(const TransformerModel& g) {
    ModelConfig c = g.config();
    c.shared_classifier = false;
    auto all = std::make_shared<std::vector<float>>(g.weights().all.begin(), g.weights().all.end());
    const std::size_t table = std::size_t(c.vocab_size) * c.dim;
    for (std::size_t i = 0; i < table; ++i) all->push_back(-g.weights().token_embedding[i]);
    REQUIRE(all->size() == c.stored_floats());
    Checkpoint ck;
    ck.config = c;
    point_llama_weights(ck.weights, all->data(), c, false);
    ck.weights.owner = all;
    return std::make_unique<TransformerModel>(std::move(ck), std::make_unique<BpeTokenizer>(bpe(g)),
                                              g.stop_tokens(), g.name() + "-untied", "in memory");
}

// `check` on `g` as it is (its classifier the embedding table) and on `g` with a separate
// classifier (untied), each under an INFO naming which.
void each_classifier(const TransformerModel& g,
                     const std::function<void(const TransformerModel&, bool tied)>& check) {
    for (const bool tied : {true, false}) {
        const auto src = tied ? std::unique_ptr<TransformerModel>() : untied(g);
        INFO((tied ? "tied" : "separate classifier"));
        check(tied ? g : *src, tied);
    }
}

// Every float of `b`'s weights is `a`'s, bit for bit, in the same layout.
void check_same_floats(const TransformerModel& a, const TransformerModel& b) {
    REQUIRE(a.config().describe() == b.config().describe());
    const auto x = a.weights().all, y = b.weights().all;
    REQUIRE(x.size() == y.size());
    CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
}

// The largest |difference| between the two models' floats.
float max_float_diff(const TransformerModel& a, const TransformerModel& b) {
    const auto x = a.weights().all, y = b.weights().all;
    REQUIRE(x.size() == y.size());
    float m = 0;
    for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
    return m;
}

// The floats of one F32 tensor in a safetensors file.
std::vector<float> f32_values(const SafeTensor& t) {
    REQUIRE(t.type == GgmlType::F32);
    std::vector<float> v(t.elements);
    std::memcpy(v.data(), t.data, v.size() * sizeof(float));
    return v;
}

void refused_with(const std::function<void()>& open, const std::string& name,
                  const std::string& why) {
    try {
        open();
        FAIL("accepted: " << why);
    } catch (const Error& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find(name) == 0);
        CHECK(msg.find(why) != std::string::npos);
        CHECK(msg.find('\n') == std::string::npos);
    }
}

}  // namespace

TEST_CASE("GPT-2 as GGUF: F32 reads back bit for bit, its layout is llama.cpp's", "[gpt2][gguf]") {
    const auto dir = test::temp_dir("gpt2-gguf");
    const auto g = test::default_gpt2(11);
    const ModelConfig& c = g->config();
    const std::size_t d = c.dim, hd = c.hidden_dim;
    each_classifier(*g, [&](const TransformerModel& m, bool tied) {
        const auto path = (dir / (tied ? "tied.gguf" : "untied.gguf")).string();
        write_gguf_llama(path, m.config(), m.weights(), bpe(m), GgmlType::F32, "g");
        const auto r = open_model(path);
        check_same_floats(m, llama(*r));
        CHECK(r->config().gpt2());
        CHECK(r->format().find("GGUF v3, gpt2, tensors:") == 0);
        CHECK(r->parameter_count() == m.parameter_count());

        // The file's own tensors: shapes [in, out], q's rows then k's then v's in attn_qkv,
        // llama.cpp's metadata keys.
        const auto bytes = test::bytes_of(path);
        const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), path);
        CHECK(f.get_string("general.architecture") == "gpt2");
        CHECK(f.get_uint("gpt2.context_length") == std::uint64_t(c.n_positions));
        CHECK(*f.get_float("gpt2.attention.layer_norm_epsilon") == Approx(c.norm_eps));
        CHECK(!f.find("gpt2.rope.dimension_count"));
        const GgufTensorInfo* qkv = f.tensor("blk.1.attn_qkv.weight");
        REQUIRE(qkv);
        CHECK(qkv->dims == std::vector<std::uint64_t>{d, 3 * d});
        const auto* v = reinterpret_cast<const float*>(qkv->data);
        CHECK(std::memcmp(v, m.weights().wq + d * d, d * d * 4) == 0);
        CHECK(std::memcmp(v + d * d, m.weights().wk + d * d, d * d * 4) == 0);
        CHECK(std::memcmp(v + 2 * d * d, m.weights().wv + d * d, d * d * 4) == 0);
        const GgufTensorInfo* qkv_bias = f.tensor("blk.1.attn_qkv.bias");
        REQUIRE(qkv_bias);
        CHECK(std::memcmp(qkv_bias->data + d * 4, m.weights().bk + d, d * 4) == 0);
        CHECK(f.tensor("position_embd.weight")->dims ==
              std::vector<std::uint64_t>{d, std::uint64_t(c.n_positions)});
        CHECK(f.tensor("blk.0.ffn_up.weight")->dims == std::vector<std::uint64_t>{d, hd});
        CHECK(f.tensor("blk.0.ffn_down.weight")->dims == std::vector<std::uint64_t>{hd, d});
        CHECK(f.tensor("blk.0.attn_norm.bias") != nullptr);
        CHECK(f.tensor("output_norm.bias") != nullptr);
        CHECK((f.tensor("output.weight") == nullptr) == tied);
    });
    // The same logits as the model written (the forward pass: tests/model/test_gpt2.cpp).
    const auto path = (dir / "tied.gguf").string();
    CHECK(test::max_logit_diff(test::greedy_run(*g, kPrompt, 20),
                               test::greedy_run(*open_model(path), kPrompt, 20)) == 0.0f);
}

TEST_CASE("GPT-2 as a Hugging Face folder: F32 reads back bit for bit, Conv1D layout (in, out)",
          "[gpt2][hf]") {
    const auto dir = test::temp_dir("gpt2-hf");
    const auto g = test::default_gpt2(12);
    const ModelConfig& c = g->config();
    const std::size_t d = c.dim, hd = c.hidden_dim;
    each_classifier(*g, [&](const TransformerModel& m, bool tied) {
        const auto folder = (dir / (tied ? "tied" : "untied")).string();
        write_hf_llama(folder, m.config(), m.weights(), bpe(m), GgmlType::F32, 0);
        std::ifstream in(fs::path(folder) / "config.json");
        const auto config = nlohmann::json::parse(in);
        CHECK(config.at("architectures").at(0) == "GPT2LMHeadModel");
        CHECK(config.at("model_type") == "gpt2");
        CHECK(config.at("n_inner") == c.hidden_dim);
        CHECK(config.at("tie_word_embeddings") == tied);
        const auto r = open_model(folder);
        check_same_floats(m, llama(*r));
        CHECK(r->format().find("Hugging Face GPT2LMHeadModel, 1 safetensors file") == 0);

        // The file's own tensors: Conv1D weights [in, out] (element [i, o] is our row o's i),
        // c_attn's columns q's, then k's, then v's.
        const auto bytes = test::bytes_of(fs::path(folder) / "model.safetensors");
        const auto f = SafetensorsFile::parse(bytes.data(), bytes.size(), "model.safetensors");
        const SafeTensor* attn = f.tensor("transformer.h.1.attn.c_attn.weight");
        REQUIRE(attn);
        CHECK(attn->shape == std::vector<std::uint64_t>{d, 3 * d});
        const auto a = f32_values(*attn);
        const LlamaWeights& w = m.weights();
        bool same = true;
        for (std::size_t i = 0; i < d; ++i)
            for (std::size_t o = 0; o < d; ++o) {
                same &= a[i * 3 * d + o] == w.wq[d * d + o * d + i];
                same &= a[i * 3 * d + d + o] == w.wk[d * d + o * d + i];
                same &= a[i * 3 * d + 2 * d + o] == w.wv[d * d + o * d + i];
            }
        CHECK(same);
        const SafeTensor* fc = f.tensor("transformer.h.0.mlp.c_fc.weight");
        REQUIRE(fc);
        CHECK(fc->shape == std::vector<std::uint64_t>{d, hd});
        const auto up = f32_values(*fc);
        CHECK(up[5 * hd + 7] == w.w1[7 * d + 5]);
        CHECK(f.tensor("transformer.h.0.mlp.c_proj.weight")->shape ==
              std::vector<std::uint64_t>{hd, d});
        CHECK(f.tensor("transformer.wpe.weight")->shape ==
              std::vector<std::uint64_t>{std::uint64_t(c.n_positions), d});
        CHECK((f.tensor("lm_head.weight") == nullptr) == tied);
    });
    // Shards read back as one file; the same logits as the model written.
    const auto sharded = (dir / "sharded").string();
    write_hf_llama(sharded, c, g->weights(), bpe(*g), GgmlType::F32, std::uint64_t(256) << 10);
    CHECK(fs::exists(fs::path(sharded) / "model.safetensors.index.json"));
    const auto s = open_model(sharded);
    check_same_floats(*g, llama(*s));
    CHECK(test::max_logit_diff(test::greedy_run(*g, kPrompt, 20),
                               test::greedy_run(*s, kPrompt, 20)) == 0.0f);
}

TEST_CASE("GPT-2 folders as the hub has them: no transformer. prefix, mask buffers, n_inner null",
          "[gpt2][hf]") {
    const auto dir = test::temp_dir("gpt2-hub");
    const auto g = test::default_gpt2(13);
    const ModelConfig& c = g->config();
    const auto folder = (dir / "g").string();
    write_hf_llama(folder, c, g->weights(), bpe(*g), GgmlType::F32, 0);
    const auto bytes = test::bytes_of(fs::path(folder) / "model.safetensors");
    const auto f = SafetensorsFile::parse(bytes.data(), bytes.size(), "model.safetensors");
    // openai-community/gpt2's names: no prefix, and each layer's causal-mask buffers.
    std::vector<SafeTensorOut> hub;
    for (const auto& t : f.tensors()) {
        REQUIRE(t.name.rfind("transformer.", 0) == 0);
        hub.push_back({t.name.substr(12), t.type, t.shape,
                       std::string(reinterpret_cast<const char*>(t.data), t.elements * 4)});
    }
    const std::uint64_t P = c.n_positions;
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".attn.";
        hub.push_back({h + "bias", GgmlType::F32, {1, 1, P, P}, std::string(P * P * 4, '\0')});
        hub.push_back({h + "masked_bias", GgmlType::F32, {}, std::string(4, '\0')});
    }
    const std::string st = safetensors_bytes(hub);
    const auto sf = SafetensorsFile::parse(reinterpret_cast<const unsigned char*>(st.data()),
                                           st.size(), "hub.safetensors");
    auto config = nlohmann::json::parse(test::slurp(fs::path(folder) / "config.json"));
    config["n_inner"] = nullptr;  // GPT2Config's way of saying 4 x n_embd
    config.erase("tie_word_embeddings");
    config["activation_function"] = "gelu_pytorch_tanh";
    const HfLlama h = parse_hf_llama(config.dump(), {sf}, "hub");
    CHECK(h.ck.config.describe() == c.describe());
    REQUIRE(h.ck.weights.all.size() == g->weights().all.size());
    CHECK(std::memcmp(h.ck.weights.all.data(), g->weights().all.data(),
                      g->weights().all.size() * 4) == 0);
    // Without architectures, model_type says GPT-2.
    config.erase("architectures");
    CHECK(parse_hf_llama(config.dump(), {sf}, "hub").ck.config.gpt2());
}

TEST_CASE("GPT-2 in 16, 8 and 4 bits reads back within the type's rounding", "[gpt2][gguf][hf]") {
    const auto dir = test::temp_dir("gpt2-narrow");
    const auto g = test::default_gpt2(14);
    const ModelConfig& c = g->config();
    // The largest value of a matrix or embedding (random_gpt2: uniform in +-1/sqrt(dim)); gains
    // and biases stay F32 in GGUF, and round like the matrices in HF's one dtype.
    const float big = 1.0f / std::sqrt(float(c.dim)), gain = 1.25f;
    const test::GreedyRun ref = test::greedy_run(*g, kPrompt, 20);
    struct Case {
        std::string type;
        bool gguf;
        float bound;  // on |x - y| over every float
    };
    for (const Case& k : std::vector<Case>{{"f16", true, big / 2048},
                                           {"bf16", true, big / 256},
                                           {"q8_0", true, big / 127},
                                           {"f16", false, gain / 2048},
                                           {"bf16", false, gain / 256}}) {
        INFO((k.gguf ? "GGUF " : "HF ") << k.type);
        const auto path =
            (dir / ((k.gguf ? "g-" : "h-") + k.type)).string() + (k.gguf ? ".gguf" : "");
        if (k.gguf)
            write_gguf_llama(path, c, g->weights(), bpe(*g), ggml_type_from_name(k.type), "g");
        else
            write_hf_llama(path, c, g->weights(), bpe(*g), ggml_type_from_name(k.type), 0);
        const auto r = open_model(path);
        const float diff = max_float_diff(*g, llama(*r));
        WARN("GPT-2 " << (k.gguf ? "GGUF " : "HF ") << k.type << ": max |weight difference| "
                      << diff << ", max |logit difference| "
                      << test::max_logit_diff(ref, test::greedy_run(*r, kPrompt, 20)));
        CHECK(diff > 0.0f);
        CHECK(diff <= k.bound);
    }
    // Q4_0 loads too (its own rounding: 16 levels a block).
    const auto q4 = (dir / "g-q4_0.gguf").string();
    write_gguf_llama(q4, c, g->weights(), bpe(*g), GgmlType::Q4_0, "g");
    CHECK(max_float_diff(*g, llama(*open_model(q4))) <= big / 7);
    // K-quants too: the MLP's down projection (rows of 512) in Q4_K or Q6_K, the other matrices
    // (rows of 128) in their fallbacks, Q4_0 and Q8_0; read as float32, as every GPT-2.
    for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q6_K}) {
        INFO(ggml_type_name(t));
        const auto path = (dir / (std::string("g-") + ggml_type_name(t) + ".gguf")).string();
        write_gguf_llama(path, c, g->weights(), bpe(*g), t, "g");
        const auto r = open_model(path);
        CHECK(r->format().find(std::string(" ") + ggml_type_name(t)) != std::string::npos);
        CHECK(max_float_diff(*g, llama(*r)) <= big / (t == GgmlType::Q4_K ? 7 : 15));
    }
}

TEST_CASE("kvscope-cli: info names a GPT-2 model's architecture, export writes it as GGUF",
          "[gpt2][cli]") {
    const auto dir = test::temp_dir("gpt2-cli");
    const auto g = test::default_gpt2(15);
    const auto folder = (dir / "hf").string();
    write_hf_llama(folder, g->config(), g->weights(), bpe(*g), GgmlType::F32, 0);
    auto r = test::run_cli({"info", "--model", folder});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("architecture: gpt2\n") != std::string::npos);
    CHECK(r.out.find("format: Hugging Face GPT2LMHeadModel") != std::string::npos);
    const auto gguf = (dir / "g.gguf").string();
    r = test::run_cli({"export", "--model", folder, "--gguf", gguf, "--type", "q8_0"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("GGUF v3, gpt2, Q8_0 matrices") != std::string::npos);
    r = test::run_cli({"info", "--model", gguf});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("architecture: gpt2\n") != std::string::npos);
    CHECK(r.out.find("format: GGUF v3, gpt2, tensors:") != std::string::npos);
    r = test::run_cli({"info", "--model", gguf, "--weights", "f16"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("the gpt2 architecture runs with float32 weights only") != std::string::npos);
}

TEST_CASE("hostile GPT-2 GGUF files: one clear line each", "[gpt2][gguf]") {
    const auto dir = test::temp_dir("gpt2-gguf-hostile");
    const auto g = test::default_gpt2(16);
    const ModelConfig& c = g->config();
    const auto path = (dir / "g.gguf").string();
    write_gguf_llama(path, c, g->weights(), bpe(*g), GgmlType::Q8_0, "g");
    const auto good = test::bytes_of(path);
    REQUIRE_NOTHROW(parse_gguf_llama(good.data(), good.size(), "good"));
    auto refused = [&](const std::vector<unsigned char>& b, const std::string& why,
                       const OpenLimits& limits = {}, GgmlType weights = GgmlType::F32) {
        refused_with([&] { parse_gguf_llama(b.data(), b.size(), "bad.gguf", {}, limits, weights); },
                     "bad.gguf", why);
    };
    SECTION("every truncation") {
        for (std::size_t n = 0; n + 32 < good.size(); n += (n < 4000 ? 7 : 997)) {
            INFO("cut at " << n);
            CHECK_THROWS_AS(parse_gguf_llama(good.data(), n, "cut"), Error);
        }
    }
    // Fields found by their names in the file: a key's value follows its u32 type, a tensor's
    // u32 n_dims and u64 dims follow its name.
    auto find = [&](const std::string& s) {
        const auto it = std::search(good.begin(), good.end(), s.begin(), s.end());
        REQUIRE(it != good.end());
        return static_cast<std::size_t>(it - good.begin()) + s.size();
    };
    auto patched = [&](std::size_t at, const void* v, std::size_t n) {
        auto b = good;
        std::memcpy(b.data() + at, v, n);
        return b;
    };
    const std::uint32_t zero = 0, three = 3;
    refused(patched(find("gpt2.context_length") + 4, &zero, 4), "gpt2.context_length is 0");
    refused(patched(find("gpt2.block_count") + 4, &three, 4),
            "tensor 'blk.3.attn_norm.weight' is not one of a gpt2 model's");
    const std::uint32_t more = 4 * c.n_positions;
    refused(patched(find("gpt2.context_length") + 4, &more, 4),
            "tensor 'position_embd.weight' is [128, 256], the shapes");
    // The position table shorter than the context the metadata claims.
    const std::uint64_t fewer = c.n_positions - 1;
    refused(patched(find("position_embd.weight") + 4 + 8, &fewer, 8),
            "tensor 'position_embd.weight' is [128, 255]");
    const std::uint64_t narrow = 64;
    refused(patched(find("blk.2.attn_qkv.weight") + 4 + 8, &narrow, 8),
            "tensor 'blk.2.attn_qkv.weight' is [128, 64], the shapes");
    refused(patched(find("blk.0.ffn_up.bias") - 11, "ffn_dn", 6), "no tensor 'blk.0.ffn_up.bias'");
    refused(patched(find("general.architecture") + 4 + 8, "gpt3", 4),
            "architecture 'gpt3' is not supported");
    refused(patched(find("gpt2.embedding_length") - 21, "gpt3", 4),
            "no metadata 'gpt2.embedding_length'");
    refused(good, "the gpt2 architecture runs with float32 weights only", {}, GgmlType::Q8_0);
    refused(good, "does not fit", OpenLimits{0, {{1 << 20, "a test's budget", true}}});

    // The context the user chooses: shorter is taken (the KV cache is for that), longer is the
    // position table's.
    const GgufLlama shorter = parse_gguf_llama(good.data(), good.size(), "g", {}, {100, {}});
    CHECK(shorter.ck.config.seq_len == 100);
    CHECK(shorter.ck.config.n_positions == c.n_positions);
    CHECK(shorter.format.find("context 100 of the model's 256 (chosen)") != std::string::npos);
    CHECK(parse_gguf_llama(good.data(), good.size(), "g", {}, {100000, {}}).ck.config.seq_len ==
          c.n_positions);
}

TEST_CASE("hostile GPT-2 Hugging Face folders: one clear line each", "[gpt2][hf]") {
    const auto dir = test::temp_dir("gpt2-hf-hostile");
    const auto g = test::default_gpt2(17);
    const ModelConfig& c = g->config();
    const auto folder = (dir / "g").string();
    write_hf_llama(folder, c, g->weights(), bpe(*g), GgmlType::BF16, 0);
    const auto good = test::bytes_of(fs::path(folder) / "model.safetensors");
    const std::string config = test::slurp(fs::path(folder) / "config.json");
    const auto f = SafetensorsFile::parse(good.data(), good.size(), "model.safetensors");
    REQUIRE_NOTHROW(parse_hf_llama(config, {f}, "good"));
    auto cfg = [&](const std::string& key, const nlohmann::json& v) {
        auto j = nlohmann::json::parse(config);
        if (v.is_discarded())
            j.erase(key);
        else
            j[key] = v;
        return j.dump();
    };
    auto refused = [&](const std::string& cfg_text, const std::string& why,
                       GgmlType weights = GgmlType::F32) {
        refused_with([&] { parse_hf_llama(cfg_text, {f}, "bad", {}, weights); }, "bad", why);
    };
    const nlohmann::json gone(nlohmann::json::value_t::discarded);
    refused(cfg("activation_function", "gelu"),
            "activation_function \"gelu\" is not supported (kvscope's GELU is the tanh form");
    refused(cfg("activation_function", "relu"), "activation_function \"relu\" is not supported");
    refused(cfg("scale_attn_by_inverse_layer_idx", true),
            "scale_attn_by_inverse_layer_idx is true");
    refused(cfg("reorder_and_upcast_attn", true), "reorder_and_upcast_attn is true");
    refused(cfg("scale_attn_weights", false), "scale_attn_weights is false");
    refused(cfg("model_type", "llama"), "model_type \"llama\" is not \"gpt2\"");
    refused(cfg("architectures", {"GPTNeoXForCausalLM"}), "'GPTNeoXForCausalLM' is not supported");
    refused(cfg("n_positions", 0), "n_positions is 0");
    refused(cfg("n_positions", c.n_positions - 1),
            "tensor 'transformer.wpe.weight' is [256, 128], the shapes");
    refused(cfg("n_embd", gone), "config.json has no n_embd");
    refused(cfg("n_head", -8), "n_head = -8 is not a size");
    refused(cfg("n_layer", 5), "no tensor 'transformer.h.4.ln_1.weight'");
    refused(cfg("n_layer", 3),
            "tensor 'transformer.h.3.attn.c_attn.bias' is not one of a GPT2LMHeadModel's");
    refused(cfg("n_inner", 256), "tensor 'transformer.h.0.mlp.c_fc.weight' is [128, 512]");
    refused(cfg("tie_word_embeddings", false), "no tensor 'lm_head.weight'");
    refused(cfg("tie_word_embeddings", "yes"),
            "tie_word_embeddings = \"yes\" is not true or false");
    refused(cfg("layer_norm_epsilon", 1.0), "LayerNorm epsilon");
    refused(config, "the gpt2 architecture runs with float32 weights only", GgmlType::BF16);
    // A Conv1D weight stored as a Linear one ([out, in]) is named with both shapes.
    std::uint64_t n = 0;
    std::memcpy(&n, good.data(), 8);
    std::string head(good.begin() + 8, good.begin() + 8 + long(n));
    const std::string from =
        "\"transformer.h.0.mlp.c_fc.weight\":{\"dtype\":\"BF16\",\"shape\":[128,512]";
    const auto at = head.find(from);
    REQUIRE(at != std::string::npos);
    head.replace(at, from.size(),
                 "\"transformer.h.0.mlp.c_fc.weight\":{\"dtype\":\"BF16\",\"shape\":[512,128]");
    std::vector<unsigned char> b(good);
    std::memcpy(b.data() + 8, head.data(), head.size());
    refused_with(
        [&] { parse_hf_llama(config, {SafetensorsFile::parse(b.data(), b.size(), "x")}, "bad"); },
        "bad", "tensor 'transformer.h.0.mlp.c_fc.weight' is [512, 128], the shapes");
}
