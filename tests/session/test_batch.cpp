// Batched prefill and decode give each sequence exactly what it gets alone.
#include <catch2/catch.hpp>

#include "core/loaders/model_loader.h"
#include "core/session/batch_session.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

TEST_CASE("a batch of prompts generates what each prompt generates alone", "[batch]") {
    CpuBackend be;
    const std::vector<std::string> prompts{"the cat", "a", "the the cat at", "cat"};
    BatchSession b(test::shared_tiny_model(), be, 12);
    b.set_prompts(prompts);
    const BatchStepRecord& pre = b.step();
    CHECK(pre.phase == Phase::Prefill);
    CHECK(pre.active == 4);
    int prompt_rows = 0;
    for (int i = 0; i < 4; ++i) prompt_rows += b.prompt_len(i);
    CHECK(pre.rows == prompt_rows);
    // One matmul call per linear layer for the whole batch, not one per sequence.
    CHECK(pre.op_times.calls[static_cast<int>(Op::Matmul)] ==
          test::shared_tiny_model().config().n_layers * 7 + 1);
    CHECK(pre.op_times.calls[static_cast<int>(Op::Attention)] ==
          test::shared_tiny_model().config().n_layers * 4);
    while (!b.finished()) {
        const BatchStepRecord& r = b.step();
        CHECK(r.phase == Phase::Decode);
        CHECK(r.rows == r.active);
    }
    for (int i = 0; i < 4; ++i) {
        SessionConfig cfg;
        cfg.max_new_tokens = 12;
        Session s(test::shared_tiny_model(), be, cfg);
        s.set_prompt(prompts[i]);
        while (!s.finished()) s.step();
        INFO("sequence " << i);
        CHECK(b.tokens(i) == s.tokens());
        CHECK(b.finish_reason(i) == s.finish_reason());
    }
}

TEST_CASE("batch limits", "[batch]") {
    CpuBackend be;
    BatchSession b(test::shared_tiny_model(), be, 4);
    CHECK_THROWS_AS(b.set_prompts({}), Error);
    CHECK_THROWS_AS(b.set_prompts(std::vector<std::string>(9, "a")), Error);
    CHECK_THROWS_WITH(b.set_prompts({std::string(80, 'x')}), Catch::Contains("do not fit"));
}

TEST_CASE("a batch that reaches its limit and the context together ends as Session does",
          "[batch]") {
    // The longest limit the context allows for "a": the last new token fills the context, so
    // both rules hold at once; Session says "context full" (that is why it stopped).
    CpuBackend be;
    SessionConfig cfg;
    Session s(test::shared_tiny_model(), be, cfg);
    s.set_prompt("a");
    const int limit = s.max_new_tokens_allowed();
    cfg.max_new_tokens = limit;
    cfg.stop_at_end_token = false;
    Session alone(test::shared_tiny_model(), be, cfg);
    alone.set_prompt("a");
    while (!alone.finished()) alone.step();
    BatchSession b(test::shared_tiny_model(), be, limit);
    b.set_prompts({"a"});
    while (!b.finished()) b.step();
    if (alone.finish_reason() != FinishReason::EndToken &&
        b.finish_reason(0) != FinishReason::EndToken) {
        CHECK(alone.finish_reason() == FinishReason::ContextFull);
        CHECK(b.finish_reason(0) == alone.finish_reason());
    }
    // The rule itself, in its order: end token, then context, then limit.
    CHECK(stop_rule(true, 9, 8, 8, 8) == FinishReason::EndToken);
    CHECK(stop_rule(false, 9, 8, 8, 8) == FinishReason::ContextFull);
    CHECK(stop_rule(false, 8, 8, 7, 7) == FinishReason::LengthLimit);
    CHECK(stop_rule(false, 8, 8, 7, 0) == FinishReason::None);
    CHECK(std::string(finish_reason_name(FinishReason::ContextFull)) == "context full");
}
