// Hugging Face Llama folders: our exports of the llama2.c models (config.json +
// safetensors, one file or shards) read back as the same model (F32: the same logits bit for bit;
// F16/BF16: the same greedy text, logit differences bounded, and kept compact the same logits as
// dequantised), q/k rows in HF's rotate-half order checked against that RoPE's own definition,
// and hostile folders refused with one line.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/files/safetensors_file.h"
#include "core/loaders/gguf_writer.h"
#include "core/loaders/hf_llama.h"
#include "core/loaders/hf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/session/session.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/greedy_runs.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {

std::string export_hf(const Model& m, const fs::path& dir, const std::string& type,
                      std::uint64_t shard_bytes = 0) {
    const auto& lm = dynamic_cast<const TransformerModel&>(m);
    const auto folder = (dir / (m.name() + "-" + type + (shard_bytes ? "-sharded" : ""))).string();
    write_hf_llama(folder, lm.config(), lm.weights(),
                   dynamic_cast<const BpeTokenizer&>(m.tokenizer()), ggml_type_from_name(type),
                   shard_bytes);
    return folder;
}

}  // namespace

TEST_CASE("HF exports read back as the llama2.c model: F32 bit for bit, shards as one file",
          "[hf]") {
    const auto dir = test::temp_dir("hf-export");
    for (const auto& m : test::llama2c_models()) {
        const test::GreedyRun ref = test::greedy_run(*m, "Once upon a time", 40);
        for (std::uint64_t shard : {std::uint64_t(0), std::uint64_t(64) << 10}) {
            const auto folder = export_hf(*m, dir, "f32", shard);
            INFO(m->name() << " shards of " << shard << " bytes");
            CHECK(fs::exists(fs::path(folder) / "model.safetensors.index.json") == (shard > 0));
            const auto h = open_model(folder);
            CHECK(h->config().describe() == m->config().describe());
            CHECK(h->format().find("Hugging Face LlamaForCausalLM") == 0);
            const test::GreedyRun r = test::greedy_run(*h, "Once upon a time", 40);
            CHECK(r.tokens == ref.tokens);
            CHECK(r.text == ref.text);
            CHECK(test::max_logit_diff(ref, r) == 0.0f);
        }
    }
}

TEST_CASE("HF F16 and BF16 exports keep the greedy text, kept compact, their dequantised logits",
          "[hf]") {
    const auto dir = test::temp_dir("hf-half");
    const auto m = open_model("default");
    const test::GreedyRun ref = test::greedy_run(*m, "Once upon a time", 40);
    // Every tensor is rounded here, norms and embeddings too (HF keeps one dtype), so the bounds
    // are the GGUF test's for the same types (tests/loaders/test_gguf.cpp: norms stay F32 there).
    for (const auto& [type, bound] :
         std::vector<std::pair<std::string, float>>{{"f16", 0.05f}, {"bf16", 0.5f}}) {
        const auto folder = export_hf(*m, dir, type);
        const test::GreedyRun r = test::greedy_run(*open_model(folder), "Once upon a time", 40);
        const float d = test::max_logit_diff(ref, r);
        INFO(type << ": max |logit difference| " << d);
        WARN(type << " HF: max |logit difference| over " << r.logits.size() << " steps = " << d);
        CHECK(r.tokens == ref.tokens);
        CHECK(d <= bound);
        // --weights of the file's own type: the matrices used in place (q/k reordered), and a
        // compact matmul is the float32 matmul of the dequantised matrix, bit for bit.
        const auto hc = open_model(folder, "", ggml_type_from_name(type));
        CHECK(dynamic_cast<const TransformerModel&>(*hc).compact().held());
        CHECK(test::max_logit_diff(r, test::greedy_run(*hc, "Once upon a time", 40)) == 0.0f);
    }
}

TEST_CASE("q and k rows are in HF's rotate-half order: its RoPE on them is llama2.c's RoPE",
          "[hf]") {
    const auto dir = test::temp_dir("hf-rope");
    test::write_tiny_model(dir);
    const auto m = open_model((dir / "tiny.bin").string());
    const auto& lm = dynamic_cast<const TransformerModel&>(*m);
    const ModelConfig& c = lm.config();
    const auto folder = export_hf(*m, dir, "f32");
    const auto bytes = test::bytes_of(fs::path(folder) / "model.safetensors");
    const auto f = SafetensorsFile::parse(bytes.data(), bytes.size(), "model.safetensors");
    const std::size_t d = c.dim, hd = c.head_dim();
    std::vector<float> x(d);
    for (std::size_t i = 0; i < d; ++i) x[i] = std::sin(1.0f + float(i));
    for (const auto& [name, w, rows] :
         {std::tuple{"model.layers.1.self_attn.q_proj.weight", lm.weights().wq + d * d, d},
          std::tuple{"model.layers.1.self_attn.k_proj.weight",
                     lm.weights().wk + std::size_t(c.kv_dim()) * d, std::size_t(c.kv_dim())}}) {
        const SafeTensor* t = f.tensor(name);
        REQUIRE(t != nullptr);
        auto matvec = [&](const float* W) {
            std::vector<double> y(rows);
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t j = 0; j < d; ++j) y[r] += double(W[r * d + j]) * x[j];
            return y;
        };
        std::vector<float> hf_w(rows * d);
        std::memcpy(hf_w.data(), t->data, hf_w.size() * 4);
        const auto a = matvec(w), b = matvec(hf_w.data());
        const int pos = 5;
        for (std::size_t h = 0; h < rows / hd; ++h)
            for (std::size_t i = 0; i < hd / 2; ++i) {
                const double th = pos * std::pow(10000.0, -2.0 * double(i) / double(hd));
                // llama2.c (run.c): the pair (2i, 2i+1) rotates.
                const double a0 = a[h * hd + 2 * i], a1 = a[h * hd + 2 * i + 1];
                const double l0 = a0 * std::cos(th) - a1 * std::sin(th);
                const double l1 = a0 * std::sin(th) + a1 * std::cos(th);
                // transformers' apply_rotary_pos_emb: q * cos + rotate_half(q) * sin, where
                // rotate_half(q) = [-q[hd/2:], q[:hd/2]]: feature i rotates with i + hd/2.
                const double b0 = b[h * hd + i], b1 = b[h * hd + i + hd / 2];
                const double h0 = b0 * std::cos(th) - b1 * std::sin(th);
                const double h1 = b1 * std::cos(th) + b0 * std::sin(th);
                INFO(name << " head " << h << " pair " << i);
                CHECK(std::abs(l0 - h0) < 1e-9);
                CHECK(std::abs(l1 - h1) < 1e-9);
            }
    }
}

TEST_CASE("hostile HF folders and safetensors: one clear line each, nothing read past the end",
          "[hf]") {
    const auto dir = test::temp_dir("hf-hostile");
    test::write_tiny_model(dir);
    const auto tiny = open_model((dir / "tiny.bin").string());
    const auto folder = export_hf(*tiny, dir, "bf16");
    const auto good = test::bytes_of(fs::path(folder) / "model.safetensors");
    const std::string config = test::slurp(fs::path(folder) / "config.json");
    REQUIRE_NOTHROW(SafetensorsFile::parse(good.data(), good.size(), "good"));

    auto parse = [&](const std::vector<unsigned char>& b, const std::string& cfg) {
        const auto f = SafetensorsFile::parse(b.data(), b.size(), "bad.safetensors");
        return parse_hf_llama(cfg, {f}, "bad");
    };
    auto refused = [&](const std::vector<unsigned char>& b, const std::string& cfg,
                       const std::string& why) {
        try {
            parse(b, cfg);
            FAIL("accepted: " << why);
        } catch (const Error& e) {
            const std::string msg = e.what();
            INFO(msg);
            CHECK(msg.find("bad") == 0);
            CHECK(msg.find(why) != std::string::npos);
            CHECK(msg.find('\n') == std::string::npos);
        }
    };
    SECTION("every truncation") {
        for (std::size_t n = 0; n < good.size(); n += (n < 3000 ? 1 : 61)) {
            INFO("cut at " << n);
            CHECK_THROWS_AS(parse({good.begin(), good.begin() + long(n)}, config), Error);
        }
    }
    SECTION("the header") {
        std::uint64_t n = 0;
        std::memcpy(&n, good.data(), 8);
        const std::string head(good.begin() + 8, good.begin() + 8 + long(n));
        auto with_head = [&](const std::string& h) {  // u64 length, the header, the data
            const std::size_t data = good.size() - 8 - n;
            std::vector<unsigned char> b(8 + h.size() + data);
            const std::uint64_t len = h.size();
            std::memcpy(b.data(), &len, 8);
            std::memcpy(b.data() + 8, h.data(), h.size());
            std::memcpy(b.data() + 8 + h.size(), good.data() + 8 + n, data);
            return b;
        };
        auto replaced = [&](const std::string& from, const std::string& to) {
            std::string h = head;
            const auto at = h.find(from);
            REQUIRE(at != std::string::npos);
            return with_head(h.replace(at, from.size(), to));
        };
        auto huge = good;
        const std::uint64_t big = ~0ull;
        std::memcpy(huge.data(), &big, 8);
        refused(huge, config, "header length");
        refused(with_head("[1, 2]"), config, "not a JSON object");
        refused(with_head("{\"a\": 1"), config,
                "header: not valid JSON at byte 7 (line 1, column 8): unexpected end of input");
        refused(replaced("\"BF16\"", "\"I8\""), config, "dtype I8 is not supported");
        refused(replaced("\"shape\":[300,16]", "\"shape\":[300,17]"), config, "bytes, its dtype");
        refused(replaced("\"shape\":[300,16]", "\"shape\":[300,-16]"), config,
                "shape[1] = -16 is not a size");
        refused(replaced("\"shape\":[300,16]", "\"shape\":[4294967296,4294967296]"), config,
                "shape[1]: 4294967296 x 4294967296 is more than 1099511627776");
        refused(replaced("\"data_offsets\":[0,", "\"data_offsets\":[99999999,"), config,
                "lie outside");
        refused(replaced("\"shape\":[300,16]", "\"shape\":[16,300]"), config,
                "model.embed_tokens.weight' is [16, 300]");
        refused(replaced("model.norm.weight", "model.nrm.weight"), config, "no tensor 'model.norm");
        refused(
            with_head(head.substr(0, head.find_last_of('}')) +  // before the padding spaces
                      ",\"model.extra\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}"),
            config, "tensor 'model.extra' is not one");
    }
    SECTION("config.json") {
        auto cfg = [&](const std::string& key, const nlohmann::json& v) {
            auto j = nlohmann::json::parse(config);
            if (v.is_discarded())
                j.erase(key);
            else
                j[key] = v;
            return j.dump();
        };
        const nlohmann::json gone(nlohmann::json::value_t::discarded);
        refused(
            good, "not json",
            "config.json: not valid JSON at byte 1 (line 1, column 2): invalid literal; near 'no'");
        refused(good, cfg("architectures", {"Qwen2ForCausalLM"}),
                "no tensor 'model.layers.0.self_attn.q_proj.bias'");
        refused(good, cfg("architectures", {"GPTNeoXForCausalLM"}),
                "'GPTNeoXForCausalLM' is not supported");
        // GPT-2's table (core/loaders/arch_gpt2.cpp) over a Llama config: its model_type says no.
        refused(good, cfg("architectures", {"GPT2LMHeadModel"}), "model_type \"llama\"");
        // rope_theta, rms_norm_eps and rope_scaling: tests/model/test_rope_and_norm.cpp
        refused(good, cfg("hidden_act", "gelu"), "hidden_act");
        refused(good, cfg("attention_bias", true), "attention_bias");
        refused(good, cfg("hidden_size", gone), "no hidden_size");
        refused(good, cfg("hidden_size", -16), "hidden_size = -16 is not a size");
        refused(good, cfg("num_hidden_layers", 3), "no tensor 'model.layers.2.");
        refused(good, cfg("num_key_value_heads", 4), "[8, 16]");
        refused(good, cfg("head_dim", 8), "head_dim 8");
        refused(good, cfg("tie_word_embeddings", false), "no tensor 'lm_head.weight'");
        // A context longer than kvscope holds is cut, and the format says so.
        const HfLlama h =
            parse_hf_llama(cfg("max_position_embeddings", 1000000),
                           {SafetensorsFile::parse(good.data(), good.size(), "x")}, "long");
        CHECK(h.ck.config.seq_len == 131072);
        CHECK(h.format.find("context cut from 1000000 to 131072") != std::string::npos);
    }
}

TEST_CASE("kvscope-cli: export --hf, info and generate on the folder, broken folders exit 2",
          "[hf][cli]") {
    const auto dir = test::temp_dir("hf-cli");
    const auto out = (dir / "m").string();
    auto r = test::run_cli({"export", "--model", "default", "--hf", out, "--type", "bf16"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Hugging Face LlamaForCausalLM, BF16 tensors") != std::string::npos);
    r = test::run_cli({"info", "--model", out});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("format: Hugging Face LlamaForCausalLM, 1 safetensors file, tensors:") !=
          std::string::npos);
    CHECK(r.out.find("BF16") != std::string::npos);
    const auto a =
        test::run_cli({"generate", "--model", out, "--prompt", "Once", "--max-new-tokens", "20"});
    REQUIRE(a.exit_code == 0);
    // The folder, its config.json and its safetensors file all name the same model.
    for (const auto& p : {out + "/config.json", out + "/model.safetensors"}) {
        const auto b =
            test::run_cli({"generate", "--model", p, "--prompt", "Once", "--max-new-tokens", "20"});
        CHECK(b.exit_code == 0);
        CHECK(b.out == a.out);
    }
    // Never over a model: the folder already holds a config.json, which stays as it was.
    const std::string before = test::slurp(out + "/config.json");
    r = test::run_cli({"export", "--model", "default", "--hf", out});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("already holds a config.json") != std::string::npos);
    CHECK(test::slurp(out + "/config.json") == before);
    r = test::run_cli(
        {"export", "--model", "default", "--hf", (dir / "q").string(), "--type", "q8_0"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("F32, F16 or BF16") != std::string::npos);
    r = test::run_cli(
        {"export", "--model", "default", "--gguf", (dir / "x.gguf").string(), "--shard-mb", "1"});
    CHECK(r.exit_code == 2);

    // Shards: an index naming a file outside the folder, a tensor in two shards, no tokenizer.
    const auto sh = (dir / "sh").string();
    REQUIRE(
        test::run_cli({"export", "--model", "default", "--hf", sh, "--shard-mb", "1"}).exit_code ==
        0);
    REQUIRE(fs::exists(sh + "/model.safetensors.index.json"));
    auto index = nlohmann::json::parse(test::slurp(sh + "/model.safetensors.index.json"));
    auto write_index = [&](const nlohmann::json& j) {
        std::ofstream(sh + "/model.safetensors.index.json") << j.dump();
    };
    auto fails_with = [&](const std::string& why) {
        const auto x = test::run_cli({"info", "--model", sh});
        CHECK(x.exit_code == 2);
        INFO(x.err);
        CHECK(x.err.find(why) != std::string::npos);
        CHECK(std::count(x.err.begin(), x.err.end(), '\n') == 1);
    };
    auto bad = index;
    bad["weight_map"]["model.norm.weight"] = "../m/model.safetensors";
    write_index(bad);
    fails_with("is not a file name in");
    bad = index;
    bad["weight_map"]["model.norm.weight"] = "missing.safetensors";
    write_index(bad);
    fails_with("missing.safetensors");
    write_index(nlohmann::json::object());
    fails_with("no weight_map");
    write_index(index);
    REQUIRE(test::run_cli({"info", "--model", sh}).exit_code == 0);
    fs::remove(sh + "/tokenizer.bin");
    fails_with("no tokenizer in the folder");

    // Paths that are not a Hugging Face model: a safetensors file alone, a folder without
    // config.json, a model.safetensors that is a pipe or a folder.
    auto refused_path = [&](const std::string& path, const std::string& why) {
        const auto x = test::run_cli({"info", "--model", path});
        INFO(x.err);
        CHECK(x.exit_code == 2);
        CHECK(x.err.find(why) != std::string::npos);
        CHECK(std::count(x.err.begin(), x.err.end(), '\n') == 1);
    };
    fs::create_directories(dir / "alone");
    fs::copy_file(out + "/model.safetensors", dir / "alone/model.safetensors");
    refused_path((dir / "alone/model.safetensors").string(), "no config.json beside it");
    refused_path((dir / "alone").string(), "is a folder; give the path of a file in it");
    fs::create_directories(dir / "pipe");
    fs::copy_file(out + "/config.json", dir / "pipe/config.json");
    REQUIRE(::mkfifo((dir / "pipe/model.safetensors").c_str(), 0600) == 0);
    refused_path((dir / "pipe").string(), "not a regular file");
    fs::create_directories(dir / "sub/model.safetensors");
    fs::copy_file(out + "/config.json", dir / "sub/config.json");
    refused_path((dir / "sub").string(), "is a folder");
}
