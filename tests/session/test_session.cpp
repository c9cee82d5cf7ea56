// Session and Trace on a synthetic model: what each step records, cache growth, limits.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <span>

#include "core/loaders/model_loader.h"
#include "core/model/kv_rows.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

TEST_CASE("prefill records the full causal block, decode one row per layer and head", "[session]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 5;
    Session s(test::shared_tiny_model(), be, cfg);
    s.set_prompt("the cat");
    const int P = s.prompt_len();
    REQUIRE(P >= 3);
    const ModelConfig& c = test::shared_tiny_model().config();

    const StepRecord& pre = s.step();
    CHECK(pre.phase == Phase::Prefill);
    CHECK(pre.tokens_processed == P);
    CHECK(pre.forward_calls == 1);
    CHECK(pre.attention.rows == P);
    CHECK(pre.attention.q_pos0 == 0);
    for (int l = 0; l < c.n_layers; ++l)
        for (int h = 0; h < c.n_heads; ++h)
            for (int r = 0; r < P; ++r) {
                const auto row = pre.attention.row(l, h, r);
                CHECK(row.size() == static_cast<std::size_t>(r + 1));  // causal: keys 0..r
                double sum = 0;
                for (float p : row) sum += p;
                CHECK(sum == Approx(1.0).epsilon(1e-5));
            }
    CHECK(pre.kv.len == P);
    CHECK(pre.kv_rows_kept == P);
    CHECK(pre.kv_rows.size() == std::size_t(c.n_layers) * 2 * P * c.kv_dim());
    CHECK(pre.counts.flops > 0);
    CHECK(pre.wall_seconds > 0);
    CHECK(pre.op_times.calls[static_cast<int>(Op::Matmul)] == c.n_layers * 7 + 1);
    CHECK(pre.top.size() == 10);
    CHECK(pre.top[0].prob >= pre.top[1].prob);

    const StepRecord& d1 = s.step();
    CHECK(d1.phase == Phase::Decode);
    CHECK(d1.tokens_processed == 1);
    CHECK(d1.pos0 == P);
    CHECK(d1.attention.rows == 1);
    CHECK(d1.attention.q_pos0 == P);
    CHECK(d1.attention.row(0, 0, 0).size() == static_cast<std::size_t>(P + 1));
    CHECK(d1.kv.len == P + 1);
    CHECK(d1.kv_rows_kept == 1);
    // The row appended is the K/V of the token chosen at prefill. (`pre` dangles by now: step()
    // may grow the trace's vector, so read the prefill from the trace; found by ASan.)
    CHECK(d1.new_tokens == std::vector<int>{s.trace().steps()[0].token_out});
}

TEST_CASE("KV rows written at decode are the rows an uncached recomputation produces",
          "[session]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 4;
    Session a(test::shared_tiny_model(), be, cfg);
    cfg.mode = CacheMode::Uncached;
    Session b(test::shared_tiny_model(), be, cfg);
    a.set_prompt("the");
    b.set_prompt("the");
    while (!a.finished()) {
        const StepRecord& x = a.step();
        const StepRecord& y = b.step();
        CHECK(x.kv_rows == y.kv_rows);
        CHECK(x.logits == y.logits);
        CHECK(x.attention.p == y.attention.p);
        if (x.phase == Phase::Decode) CHECK(y.counts.flops > x.counts.flops);
    }
}

TEST_CASE("limits: context, prompt length, max new tokens", "[session]") {
    CpuBackend be;
    const int ctx = test::shared_tiny_model().config().seq_len;
    Session s(test::shared_tiny_model(), be);
    std::string long_prompt;
    for (int i = 0; i < ctx + 5; ++i) long_prompt += "x";
    CHECK_THROWS_WITH(s.set_prompt(long_prompt),
                      Catch::Contains("longer than the model's context of 64"));
    // Run to the context limit: generation ends with a reason, stepping further is an error.
    s.set_prompt("the");
    while (!s.finished()) s.step();
    CHECK((s.finish_reason() == FinishReason::ContextFull ||
           s.finish_reason() == FinishReason::EndToken));
    if (s.finish_reason() == FinishReason::ContextFull) {
        CHECK(static_cast<int>(s.tokens().size()) == ctx + 1);
        CHECK(s.runner().kv().len == ctx);
    }
    CHECK_THROWS_AS(s.step(), Error);

    SessionConfig too_many;
    too_many.max_new_tokens = ctx;
    Session t(test::shared_tiny_model(), be, too_many);
    CHECK_THROWS_WITH(t.set_prompt("the cat"), Catch::Contains("does not fit"));
}

TEST_CASE("reset returns to the prompt and replays the same steps", "[session]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 6;
    cfg.sampler.temperature = 1.0f;
    Session s(test::shared_tiny_model(), be, cfg);
    s.set_prompt("the");
    while (!s.finished()) s.step();
    const auto first = s.tokens();
    s.reset();
    CHECK(s.trace().empty());
    CHECK(s.runner().kv().len == 0);
    while (!s.finished()) s.step();
    CHECK(s.tokens() == first);
}

TEST_CASE("switching cache mode mid-generation keeps the same tokens", "[session]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 8;
    Session a(test::shared_tiny_model(), be, cfg), b(test::shared_tiny_model(), be, cfg);
    a.set_prompt("the cat");
    b.set_prompt("the cat");
    int i = 0;
    while (!a.finished()) {
        b.set_mode(i++ % 2 ? CacheMode::Uncached : CacheMode::Cached);
        a.step();
        b.step();
    }
    CHECK(a.tokens() == b.tokens());
}

TEST_CASE("K/V rows through one view: a step's rows are the cache's rows at their positions",
          "[session][kv_rows]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 3;
    Session s(test::shared_tiny_model(), be, cfg);
    s.set_prompt("the cat");
    const ModelConfig& c = test::shared_tiny_model().config();
    const int P = s.prompt_len();
    s.step();
    s.step();
    const StepRecord& pre = s.trace().steps()[0];
    const StepRecord& d1 = s.trace().steps()[1];
    std::vector<float> all;
    s.runner().read_kv_rows(0, P + 1, all);
    const ConstKvRows cache{all.data(), c.n_layers, P + 1, c.kv_dim()};
    const ConstKvRows prefill{pre.kv_rows.data(), c.n_layers, pre.kv_rows_kept, c.kv_dim()};
    const ConstKvRows decode{d1.kv_rows.data(), c.n_layers, d1.kv_rows_kept, c.kv_dim()};
    REQUIRE(cache.size() == all.size());
    REQUIRE(prefill.size() == pre.kv_rows.size());
    REQUIRE(decode.size() == d1.kv_rows.size());
    const auto same = [](std::span<const float> a, std::span<const float> b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    };
    for (int l = 0; l < c.n_layers; ++l)
        for (int side : {ConstKvRows::K, ConstKvRows::V}) {
            for (int p = 0; p < P; ++p) CHECK(same(prefill.row(l, side, p), cache.row(l, side, p)));
            CHECK(same(decode.row(l, side, 0), cache.row(l, side, P)));
        }
    // The layout the trace's readers rely on (docs/trace-json.md): [n_layers, 2 (K, V), rows,
    // kv_dim], a layer's K rows and then its V rows.
    for (int l = 0; l < c.n_layers; ++l)
        for (int side : {ConstKvRows::K, ConstKvRows::V})
            for (int p = 0; p < P; ++p)
                CHECK(prefill.row(l, side, p).data() ==
                      pre.kv_rows.data() + ((std::size_t(l) * 2 + side) * P + p) * c.kv_dim());
    // K and V of one row differ (the view does not hand back the same side twice).
    CHECK_FALSE(same(cache.row(0, ConstKvRows::K, 0), cache.row(0, ConstKvRows::V, 0)));
}
