// RoPE's base, rope scaling and RMSNorm's epsilon as a model's own (SmolLM2's base
// 100000, Llama 3's 500000 with its scaling, epsilon 1e-6): they change what the model computes,
// and every format carries them (GGUF metadata and rope_freqs, Hugging Face config.json) to the
// same logits, bit for bit. llama.cpp's view of the same files: tests/peer/peer_llama_cpp.cpp.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/files/safetensors_file.h"
#include "core/loaders/gguf_writer.h"
#include "core/loaders/hf_llama.h"
#include "core/loaders/hf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/rope_frequencies.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "tests/support/greedy_runs.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {

// The default model's weights and tokenizer under other hyper-parameters.
std::unique_ptr<TransformerModel> varied(const Model& m, float theta, float eps,
                                         std::vector<float> factors, const std::string& name) {
    const auto& lm = dynamic_cast<const TransformerModel&>(m);
    Checkpoint ck;
    ck.config = lm.config();
    ck.weights = lm.weights();  // shares the floats (and their owner)
    ck.config.rope_theta = theta;
    ck.config.norm_eps = eps;
    ck.config.rope_factors = std::move(factors);
    ck.config.validate(name);
    return std::make_unique<TransformerModel>(
        std::move(ck),
        std::make_unique<BpeTokenizer>(dynamic_cast<const BpeTokenizer&>(m.tokenizer())),
        std::vector<int>{BpeTokenizer::kBos}, name, "in memory");
}

const BpeTokenizer& bpe(const Model& m) {
    return dynamic_cast<const BpeTokenizer&>(m.tokenizer());
}

}  // namespace

TEST_CASE("RoPE base, rope scaling and epsilon change the logits, and GGUF and HF carry them",
          "[hf][gguf]") {
    const auto dir = test::temp_dir("rope-norm");
    const auto base = open_model("default");
    const int hd = base->config().head_dim();
    const std::string prompt = "Once upon a time";
    const test::GreedyRun plain = test::greedy_run(*base, prompt, 30);

    // Llama 3's scaling with an original context of 64, so that the model's short context
    // holds all three kinds of pair (kept, divided, blended).
    const auto llama3 = llama3_rope_factors(hd, 500000.0f, 8.0, 1.0, 4.0, 64.0);
    struct Variant {
        const char* name;
        float theta, eps;
        std::vector<float> factors;
        bool hf;  // config.json can say it (no per-pair factors)
    };
    for (const Variant& v :
         {Variant{"base-100000", 100000.0f, 1e-5f, {}, true},
          Variant{"eps-1e-6", 10000.0f, 1e-6f, {}, true},
          Variant{"linear-4", 10000.0f, 1e-5f, std::vector<float>(hd / 2, 4.0f), true},
          Variant{"llama3", 500000.0f, 1e-6f, llama3, false}}) {
        INFO(v.name);
        const auto m = varied(*base, v.theta, v.eps, v.factors, v.name);
        const test::GreedyRun ref = test::greedy_run(*m, prompt, 30);
        // Each one matters: the same weights give other logits.
        CHECK(test::max_logit_diff(plain, ref) > 1e-4f);

        const auto gguf = (dir / (std::string(v.name) + ".gguf")).string();
        write_gguf_llama(gguf, m->config(), m->weights(), bpe(*m), GgmlType::F32, v.name);
        const auto g = open_model(gguf);
        CHECK(g->config().rope_theta == v.theta);
        CHECK(g->config().norm_eps == v.eps);
        CHECK(g->config().rope_factors == v.factors);
        CHECK(test::max_logit_diff(ref, test::greedy_run(*g, prompt, 30)) == 0.0f);

        const auto folder = (dir / v.name).string();
        if (!v.hf) {
            CHECK_THROWS_WITH(
                write_hf_llama(folder, m->config(), m->weights(), bpe(*m), GgmlType::F32, 0),
                Catch::Contains("per-pair rope scaling factors"));
            CHECK_FALSE(fs::exists(folder));
            continue;
        }
        write_hf_llama(folder, m->config(), m->weights(), bpe(*m), GgmlType::F32, 0);
        std::ifstream in(fs::path(folder) / "config.json");
        const auto j = nlohmann::json::parse(in);
        CHECK(j.at("rope_theta").get<double>() == double(v.theta));
        CHECK(j.at("rms_norm_eps").dump() == (v.eps == 1e-6f ? "1e-06" : "1e-05"));
        CHECK(j.at("rope_scaling").is_null() == v.factors.empty());
        const auto h = open_model(folder);
        CHECK(h->config().rope_factors == v.factors);
        CHECK(test::max_logit_diff(ref, test::greedy_run(*h, prompt, 30)) == 0.0f);
    }
}

TEST_CASE("config.json's rope_theta, rms_norm_eps and rope_scaling: read, or refused by name",
          "[hf]") {
    const auto dir = test::temp_dir("rope-config");
    const auto base = open_model("default");
    const auto folder = (dir / "hf").string();
    write_hf_llama(folder, base->config(), dynamic_cast<const TransformerModel&>(*base).weights(),
                   bpe(*base), GgmlType::F32, 0);
    std::ifstream in(fs::path(folder) / "config.json");
    const auto config = nlohmann::json::parse(in);
    const auto bytes = test::bytes_of(fs::path(folder) / "model.safetensors");
    auto parse = [&](const nlohmann::json& j) {
        return parse_hf_llama(j.dump(), {SafetensorsFile::parse(bytes.data(), bytes.size(), "x")},
                              "cfg")
            .ck.config;
    };
    auto with = [&](const std::string& key, const nlohmann::json& v) {
        auto j = config;
        if (v.is_discarded())
            j.erase(key);
        else
            j[key] = v;
        return j;
    };
    const int hd = base->config().head_dim();

    // LlamaConfig's defaults when absent: base 10000, epsilon 1e-6.
    const ModelConfig absent =
        parse(with("rms_norm_eps", nlohmann::json(nlohmann::json::value_t::discarded)));
    CHECK(absent.norm_eps == 1e-6f);
    CHECK(parse(with("rope_theta", 100000.0)).rope_theta == 100000.0f);
    const nlohmann::json llama3 = {{"rope_type", "llama3"},
                                   {"factor", 8.0},
                                   {"low_freq_factor", 1.0},
                                   {"high_freq_factor", 4.0},
                                   {"original_max_position_embeddings", 64}};
    CHECK(parse(with("rope_scaling", llama3)).rope_factors ==
          llama3_rope_factors(hd, 10000.0f, 8.0, 1.0, 4.0, 64.0));
    CHECK(parse(with("rope_scaling", {{"type", "linear"}, {"factor", 2.0}})).rope_factors ==
          std::vector<float>(hd / 2, 2.0f));
    CHECK(parse(with("rope_scaling", {{"rope_type", "default"}})).rope_factors.empty());

    auto refused = [&](const nlohmann::json& j, const std::string& why) {
        CHECK_THROWS_WITH(parse(j), Catch::Contains(why));
    };
    refused(with("rope_theta", -1.0), "RoPE base");
    refused(with("rope_theta", 1e300), "RoPE base");
    refused(with("rope_theta", "big"), "rope_theta = \"big\" is not a number");
    refused(with("rms_norm_eps", 0.0), "RMSNorm epsilon");
    refused(with("rms_norm_eps", 2.0), "RMSNorm epsilon");
    refused(with("rope_scaling", 3), "rope_scaling is not an object");
    refused(with("rope_scaling", {{"rope_type", "llama3"}}), "rope_scaling has no factor");
    refused(with("rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}),
            "rope_scaling type 'yarn' is not supported");
    refused(with("rope_scaling", {{"rope_type", "linear"}, {"factor", 0.5}}), "linear factor");
    auto bad3 = llama3;
    bad3["high_freq_factor"] = 0.5;
    refused(with("rope_scaling", bad3), "low_freq_factor");
    bad3 = llama3;
    bad3["factor"] = "8";
    refused(with("rope_scaling", bad3), "factor = \"8\" is not a number");
}

TEST_CASE("GGUF rope_freqs and scaling keys: read, or refused by name", "[gguf]") {
    const auto dir = test::temp_dir("rope-gguf");
    const auto base = open_model("default");
    const int hd = base->config().head_dim();
    // A rope_freqs tensor of the wrong length, and factors the config refuses.
    int files = 0;
    auto written = [&](std::vector<float> factors, float theta, float eps) {
        const auto m = varied(*base, 10000.0f, 1e-5f, {}, "v");
        ModelConfig c = m->config();
        c.rope_factors = std::move(factors);
        c.rope_theta = theta;
        c.norm_eps = eps;
        // (Not "v" + std::to_string(...): GCC 12 warns falsely, -Wrestrict, on that prepend.)
        const auto path = (dir / "v").string() + std::to_string(++files) + ".gguf";
        write_gguf_llama(path, c, m->weights(), bpe(*m), GgmlType::F32, "v");
        return path;
    };
    CHECK_THROWS_WITH(open_model(written(std::vector<float>(hd / 2 + 1, 1.0f), 10000.0f, 1e-5f)),
                      Catch::Contains("rope_freqs.weight' is ["));
    CHECK_THROWS_WITH(open_model(written(std::vector<float>(hd / 2, -1.0f), 10000.0f, 1e-5f)),
                      Catch::Contains("rope scaling factor -1"));
    CHECK_THROWS_WITH(open_model(written({}, 0.5f, 1e-5f)), Catch::Contains("RoPE base 0.5"));
    CHECK_THROWS_WITH(open_model(written({}, 10000.0f, -1.0f)),
                      Catch::Contains("RMSNorm epsilon -1"));
}
