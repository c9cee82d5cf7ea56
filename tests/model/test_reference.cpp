// The engine against llama2.c's run.c on stories260K (../shared/reference): greedy texts and
// ids, logits, attention probabilities, and agreement of cached, uncached and token-by-token runs.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/session/session.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using nlohmann::json;

namespace {

json read_json(const std::string& name) {
    std::ifstream f(test::shared_dir() + "/reference/" + name);
    REQUIRE(f.good());
    return json::parse(f);
}

const Model& stories() {
    static auto m = open_model(test::stories_model(), test::stories_tokenizer());
    return *m;
}

// Greedy session on stories260K, run to `max_new` tokens.
std::unique_ptr<Session> greedy(CpuBackend& be, const std::string& prompt, int max_new,
                                CacheMode mode = CacheMode::Cached, bool by_token = false) {
    SessionConfig cfg;
    cfg.mode = mode;
    cfg.max_new_tokens = max_new;
    cfg.prefill_token_by_token = by_token;
    auto s = std::make_unique<Session>(stories(), be, cfg);
    s->set_prompt(prompt);
    return s;
}

}  // namespace

TEST_CASE("stories260K header matches the reference config", "[reference]") {
    const json c = read_json("config.json");
    const ModelConfig& m = stories().config();
    CHECK(m.dim == c.at("dim"));
    CHECK(m.hidden_dim == c.at("hidden_dim"));
    CHECK(m.n_layers == c.at("n_layers"));
    CHECK(m.n_heads == c.at("n_heads"));
    CHECK(m.n_kv_heads == c.at("n_kv_heads"));
    CHECK(m.vocab_size == c.at("vocab_size"));
    CHECK(m.seq_len == c.at("seq_len"));
    CHECK(m.shared_classifier);
    CHECK(m.parameter_count() == c.at("n_params_excluding_freq_cis").get<std::size_t>());
}

TEST_CASE("greedy generation equals run.c for every reference prompt and length", "[reference]") {
    const json g = read_json("greedy_outputs.json");
    CpuBackend be;
    for (const auto& [prompt, runs] : g.items()) {
        if (prompt == "_meta") continue;
        CHECK(stories().tokenizer().encode(prompt) ==
              runs.at("prompt_token_ids").get<std::vector<int>>());
        for (const char* n : {"64", "256"}) {
            const json& r = runs[n];
            INFO("prompt '" << prompt << "' -n " << n);
            auto s = greedy(be, prompt, r.at("max_new_tokens").get<int>());
            while (!s->finished()) s->step();
            CHECK(s->tokens() == r.at("token_ids").get<std::vector<int>>());
            CHECK(s->text(true) == r.at("text").get<std::string>());
        }
    }
}

TEST_CASE("logits at the last prompt position match run.c within 1e-4", "[reference]") {
    std::ifstream f(test::shared_dir() + "/reference/logits_once_upon.txt");
    std::vector<float> ref;
    for (float x; f >> x;) ref.push_back(x);
    REQUIRE(ref.size() == 512);
    CpuBackend be;
    auto s = greedy(be, "Once upon a time", 1);
    const StepRecord& r = s->step();
    REQUIRE(r.logits.size() == ref.size());
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(r.logits[i] - ref[i])));
    INFO("largest |logit - run.c| = " << worst);
    CHECK(worst <= 1e-4);
}

TEST_CASE("top-5 logits at every prompt position and the first decode steps match run.c",
          "[reference]") {
    const json t = read_json("tokens_once_upon.json");
    CpuBackend be;
    // Prompt positions: the token-by-token prefill gives the logits at each position.
    auto runner = stories().make_runner(be);
    ForwardResult fr;
    Capture none{false, false, -1};
    for (const json& p : t.at("prompt_positions")) {
        const int tok = p.at("input_token");
        runner->forward(std::span<const int>(&tok, 1), none, fr);
        for (const json& top : p.at("top5"))
            CHECK(std::fabs(fr.logits[top.at("id").get<int>()] - top.at("logit").get<float>()) <=
                  1e-4);
    }
    // Generation steps: the session's logits at each step.
    auto s = greedy(be, "Once upon a time", 8);
    for (const json& g : t.at("generation_steps")) {
        const StepRecord& r = s->step();
        CHECK(r.token_out == g.at("argmax").get<int>());
        for (const json& top : g.at("top5"))
            CHECK(std::fabs(r.logits[top.at("id").get<int>()] - top.at("logit").get<float>()) <=
                  1e-4);
    }
}

TEST_CASE("attention probabilities at the last prompt position match run.c within 1e-5",
          "[reference]") {
    CpuBackend be;
    auto s = greedy(be, "Once upon a time", 1);
    const StepRecord& r = s->step();
    const AttentionRows& a = r.attention;
    REQUIRE(a.rows == 5);
    REQUIRE(a.q_pos0 == 0);
    std::ifstream f(test::shared_dir() + "/reference/attention_all_heads_once_upon.txt");
    std::string line;
    int checked = 0;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        int layer, head;
        ls >> layer >> head;
        const auto row = a.row(layer, head, 4);  // query at pos 4 over keys 0..4
        REQUIRE(row.size() == 5);
        for (int k = 0; k < 5; ++k) {
            float p;
            ls >> p;
            CHECK(std::fabs(row[k] - p) <= 1e-5);
        }
        ++checked;
    }
    CHECK(checked == 40);
    // The two single-head files agree with the same rows.
    for (auto [name, layer, head] : {std::tuple{"attention_L0_H0_once_upon.txt", 0, 0},
                                     std::tuple{"attention_L4_H7_once_upon.txt", 4, 7}}) {
        std::ifstream g(test::shared_dir() + "/reference/" + name);
        const auto row = a.row(layer, head, 4);
        for (int k = 0; k < 5; ++k) {
            float p;
            g >> p;
            CHECK(std::fabs(row[k] - p) <= 1e-5);
        }
    }
}

TEST_CASE("cached, uncached and token-by-token prefill agree for 100 new tokens", "[reference]") {
    CpuBackend be;
    const ModelConfig& c = stories().config();
    for (const std::string prompt :
         {"Once upon a time", "Lily and Tom went to the park", "The little dog was sad because"}) {
        INFO("prompt: " << prompt);
        auto cached = greedy(be, prompt, 100, CacheMode::Cached);
        auto uncached = greedy(be, prompt, 100, CacheMode::Uncached);
        auto by_token = greedy(be, prompt, 100, CacheMode::Cached, true);
        double worst = 0;
        while (!cached->finished()) {
            const StepRecord& a = cached->step();
            const StepRecord& b = uncached->step();
            const StepRecord& t = by_token->step();
            REQUIRE(a.logits.size() == b.logits.size());
            for (std::size_t i = 0; i < a.logits.size(); ++i) {
                worst = std::max(worst, static_cast<double>(std::fabs(a.logits[i] - b.logits[i])));
                worst = std::max(worst, static_cast<double>(std::fabs(a.logits[i] - t.logits[i])));
            }
            CHECK(a.token_out == b.token_out);
            // The uncached step recomputes every row; the cached one computes one.
            if (a.phase == Phase::Decode) {
                CHECK(a.tokens_processed == 1);
                CHECK(b.tokens_processed == a.kv.len);
            }
            // KV bytes after every step: 2 * layers * T * kv_heads * head_dim * 4
            const std::size_t T = cached->tokens().size() - 1;
            CHECK(a.kv.len == static_cast<int>(T));
            CHECK(a.kv.bytes() ==
                  2 * std::size_t(c.n_layers) * T * c.n_kv_heads * c.head_dim() * 4);
        }
        CHECK(uncached->finished());
        CHECK(cached->tokens() == uncached->tokens());
        CHECK(cached->tokens() == by_token->tokens());
        INFO("largest logit difference " << worst);
        CHECK(worst <= 1e-4);
    }
}

TEST_CASE("the CLI prints exactly what run.c prints", "[reference][cli]") {
    const json g = read_json("greedy_outputs.json");
    const json& r = g.at("Once upon a time").at("64");
    auto res =
        test::run_cli({"generate", "--model", test::stories_model(), "--prompt", "Once upon a time",
                       "--max-new-tokens", std::to_string(r.at("max_new_tokens").get<int>()),
                       "--backend", "cpu"});
    CHECK(res.exit_code == 0);
    CHECK(res.out == r.at("stdout_exact").get<std::string>());
    // The tokenizer is found beside the model, and the summary goes to stderr.
    CHECK(res.err.find("60 new") != std::string::npos);
}
