// Why K and V are cached and Q is not, per layer (core/session/why_not_q.h), against counts worked
// out by hand for the shapes: what each layer's query rows are for at a cached and an uncached
// decode step and at the prefill, at layer 0 and at the last layer; and the same accounting from
// `kvscope-cli explain --json`.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/session/why_not_q.h"
#include "kernels/cpu/cpu_backend.h"
#include "lessonlib/why_not_q_words.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

// The session's steps: prefill of P tokens, then `decodes` decode steps.
std::vector<QueryRowUse> use_at(const Model& m, CacheMode mode, int decodes, int* tokens) {
    CpuBackend be;
    SessionConfig cfg;
    cfg.mode = mode;
    cfg.stop_at_end_token = false;
    Session s(m, be, cfg);
    s.set_prompt("Once upon a time");
    for (int k = 0; k <= decodes; ++k) s.step();
    *tokens = s.trace().back().tokens_processed;
    return query_row_use(s.trace().back(), m.config().n_layers);
}

}  // namespace

TEST_CASE("why not Q: each layer's query rows, cached and uncached, at layer 0 and the last",
          "[why_not_q]") {
    const auto m = open_model("default");
    const int L = m->config().n_layers;
    REQUIRE(L >= 2);
    int T = 0;
    // Cached decode: one query row per layer, the newest, and it gives the output.
    auto u = use_at(*m, CacheMode::Cached, 3, &T);
    CHECK(T == 1);
    for (int l : {0, L - 1}) {
        INFO("cached, layer " << l);
        CHECK(u[l].computed == 1);
        CHECK(u[l].for_output == 1);
        CHECK(u[l].build_next_kv == 0);
        CHECK(u[l].rebuild_next_kv == 0);
        CHECK(u[l].thrown_away == 0);
    }
    // Uncached decode: every token again. Layer 0's earlier rows rebuild layer 1's K/V rows,
    // which the cache held; the last layer's are thrown away.
    u = use_at(*m, CacheMode::Uncached, 3, &T);
    const int P = T - 3;  // the prompt, BOS included
    CHECK(P >= 2);
    CHECK(u[0].computed == T);
    CHECK(u[0].for_output == 1);
    CHECK(u[0].rebuild_next_kv == T - 1);
    CHECK(u[0].build_next_kv == 0);
    CHECK(u[0].thrown_away == 0);
    CHECK(u[L - 1].computed == T);
    CHECK(u[L - 1].for_output == 1);
    CHECK(u[L - 1].rebuild_next_kv == 0);
    CHECK(u[L - 1].thrown_away == T - 1);
    // The prefill: the earlier rows build layer 1's new K/V rows (kept in the cache); even here
    // the last layer's earlier rows reach nothing.
    u = use_at(*m, CacheMode::Cached, 0, &T);
    CHECK(T == P);
    CHECK(u[0].build_next_kv == P - 1);
    CHECK(u[0].rebuild_next_kv == 0);
    CHECK(u[L - 1].thrown_away == P - 1);
    // Every row accounted for once, in every layer.
    for (const auto& x : u)
        CHECK(x.for_output + x.build_next_kv + x.rebuild_next_kv + x.thrown_away == x.computed);
}

TEST_CASE("why not Q: a layer's line states that layer's measured K/V difference", "[why_not_q]") {
    // Without the causal mask, one token more: layer 0's earlier K/V rows are the same (they come
    // from the token embeddings alone), the last layer's moved. Each layer's line says its own.
    const auto m = open_model("default");
    const int L = m->config().n_layers;
    CpuBackend be;
    SessionConfig cfg;
    cfg.mask = AttentionMask::Bidirectional;
    cfg.stop_at_end_token = false;
    Session s(*m, be, cfg);
    s.set_prompt("Once upon a time");
    s.step();
    const StepRecord& r = s.step();
    REQUIRE(static_cast<int>(r.kv_delta_k.size()) == L);
    CHECK(kv_recomputed_delta(r, 0) == 0);
    CHECK(kv_recomputed_delta(r, L - 1) == std::max(r.kv_delta_k[L - 1], r.kv_delta_v[L - 1]));
    CHECK(kv_recomputed_delta(r, L - 1) > 0);
    CHECK(kv_recomputed_delta(r, -1) == r.kv_recomputed_max_delta);
    CHECK(why_not_q_words(r, 0, L, ReportLang::En)
              .find("all equal to that step's rows (max |Δ| = 0)") != std::string::npos);
    CHECK(why_not_q_words(r, L - 1, L, ReportLang::En)
              .find("differing from that step's rows by at most") != std::string::npos);
    CHECK(why_not_q_words(r, 0, L, ReportLang::Zh).find("完全相同（最大 |Δ| = 0）") !=
          std::string::npos);
    CHECK(why_not_q_words(r, L - 1, L, ReportLang::Zh).find("最多相差") != std::string::npos);
    // The bidirectional view runs without a cache: no line says a cache held the rows, in either
    // language, at any layer (the words name the step before, which computed them).
    for (int l = 0; l < L; ++l) {
        INFO("layer " << l);
        const std::string en = why_not_q_words(r, l, L, ReportLang::En),
                          zh = why_not_q_words(r, l, L, ReportLang::Zh);
        CHECK(en.find("cache held") == std::string::npos);
        CHECK(en.find("cached ones") == std::string::npos);
        CHECK(en.find("the step before computed") != std::string::npos);
        CHECK(zh.find("缓存里") == std::string::npos);
        CHECK(zh.find("上一步") != std::string::npos);
    }
}

TEST_CASE("explain --no-cache gives the per-layer accounting at layer 0 and the last layer",
          "[why_not_q][cli]") {
    // Prompt "The cat sat" and 2 decode steps: the step recomputes T rows.
    for (const char* cache : {"--no-cache", ""}) {
        std::vector<std::string> args = {"explain", "--model",  "default",     "--backend",
                                         "cpu",     "--prompt", "The cat sat", "--step",
                                         "2",       "--json"};
        if (*cache) args.push_back(cache);
        const auto r = test::run_cli(args);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        const auto& layers = j.at("why_not_q").at("layers");
        const int L = static_cast<int>(layers.size());
        REQUIRE(L >= 2);
        const int T = j.at("n_keys").get<int>();
        const bool uncached = *cache != 0;
        INFO("uncached " << uncached);
        CHECK(layers[0].at("computed") == (uncached ? T : 1));
        CHECK(layers[0].at("for_output") == 1);
        CHECK(layers[0].at("rebuild_next_kv") == (uncached ? T - 1 : 0));
        CHECK(layers[0].at("thrown_away") == 0);
        CHECK(layers[L - 1].at("rebuild_next_kv") == 0);
        CHECK(layers[L - 1].at("thrown_away") == (uncached ? T - 1 : 0));
        const std::string line = j.at("why_not_q").at("line");
        CHECK(line.find(uncached ? "only to rebuild layer 1's K/V rows"
                                 : "no earlier token's query") != std::string::npos);
    }
}

namespace {

// The numbers a sentence states, in order ("layer 0: computed 8 ... 1 ..." -> {0, 8, 1, ...}).
std::vector<std::string> numbers_in(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s + " ") {
        if ((c >= '0' && c <= '9') || (c == '.' && !cur.empty())) {
            cur += c;
        } else if (!cur.empty()) {
            out.push_back(cur);
            cur.clear();
        }
    }
    return out;
}

}  // namespace

TEST_CASE("why not Q: the English and the Chinese line state the same figures", "[why_not_q]") {
    // One sentence worded once in two languages (lessonlib/why_not_q_words.h): at a prefill, a
    // cached and an uncached decode and a bidirectional step, every layer's line in English and in
    // Chinese names the same numbers in the same order.
    const auto m = open_model("default");
    const int L = m->config().n_layers;
    CpuBackend be;
    for (const auto mask : {AttentionMask::Causal, AttentionMask::Bidirectional})
        for (const auto mode : {CacheMode::Cached, CacheMode::Uncached}) {
            if (mask == AttentionMask::Bidirectional && mode == CacheMode::Cached) continue;
            SessionConfig cfg;
            cfg.mode = mode;
            cfg.mask = mask;
            cfg.stop_at_end_token = false;
            Session s(*m, be, cfg);
            s.set_prompt("Once upon a time");
            for (int k = 0; k < 3; ++k) {
                const StepRecord& r = s.step();
                for (int l = -1; l < L; ++l) {
                    const std::string en = why_not_q_words(r, l, L, ReportLang::En),
                                      zh = why_not_q_words(r, l, L, ReportLang::Zh);
                    INFO(en << "\n" << zh);
                    CHECK(!en.empty());
                    CHECK(numbers_in(en) == numbers_in(zh));
                }
            }
        }
}
