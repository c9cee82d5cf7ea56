// A bounded cache's sinks, numbered as StreamingLLM numbers them or at their original positions,
// a run past the model's context, and StreamingLLM's perplexity comparison.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/model/kv_blocks.h"
#include "core/serving/cache_effect.h"
#include "core/serving/scheduler.h"
#include "core/serving/serve_run.h"
#include "kernels/backend_factory.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/serving/serving_fixtures.h"
#include "tests/support/gpt2_model.h"

using namespace kvs;
using test::serving_ids;
using test::serving_model;

namespace {

// Each pass's logits of `tokens` fed one a pass through a paged runner with this window.
std::vector<std::vector<float>> logits_by_row(Backend& be, const std::vector<int>& tokens,
                                              int sinks, int window, SinkPositions positions) {
    const ModelConfig& c = serving_model().config();
    const int bs = 4, blocks = (int(tokens.size()) + bs - 1) / bs;
    KvBlockPool pool(be, c.n_layers, blocks, bs, c.kv_dim());
    auto runner = serving_model().make_paged_runner(be, 1, pool);
    runner->set_window(sinks, window, positions);
    std::vector<int> table(blocks);
    for (int b = 0; b < blocks; ++b) table[b] = b;
    std::vector<std::vector<float>> out;
    const Capture none{false, false, -1, false, false, false, false, false};
    for (std::size_t p = 0; p < tokens.size(); ++p) {
        runner->set_blocks(0, table, int(p));
        const SeqInput in{0, std::span<const int>(tokens).subspan(p, 1)};
        ForwardResult r;
        runner->forward_batch(std::span<const SeqInput>(&in, 1), none,
                              std::span<ForwardResult>(&r, 1));
        out.push_back(r.logits);
    }
    return out;
}

}  // namespace

TEST_CASE(
    "sinks numbered by their place in the cache agree with their original positions until "
    "the window leaves a gap",
    "[serving][window]") {
    // Window 6, 2 sinks: the pass at position p (from 0) sees rows 0, 1 and p - 6 .. p - 1. Up to
    // p = 8 those follow the sinks with no gap, so both numberings are the same positions; from
    // p = 9 StreamingLLM's moves the sinks next to the window, and the logits differ.
    CpuBackend be;
    const std::vector<int> tokens = serving_ids(800, 20);
    const auto cache = logits_by_row(be, tokens, 2, 6, SinkPositions::Cache);
    const auto original = logits_by_row(be, tokens, 2, 6, SinkPositions::Original);
    for (int p = 0; p <= 8; ++p) CHECK(cache[p] == original[p]);
    int differ = 0;
    for (int p = 9; p < 20; ++p) differ += cache[p] != original[p] ? 1 : 0;
    CHECK(differ == 11);
    // The emulated CUDA backend gathers the rows instead of reading them in place, and turns its
    // copy of the sinks with the same RoPE: the same predictions.
    BackendChoice emu = make_backend("cuda-emulated");
    const auto gathered = logits_by_row(*emu.backend, tokens, 2, 6, SinkPositions::Cache);
    for (int p = 0; p < 20; ++p)
        for (std::size_t i = 0; i < cache[p].size(); ++i)
            CHECK(std::fabs(gathered[p][i] - cache[p][i]) < 1e-3);
    // GPT-2 learns its positions: its sinks cannot be moved.
    const auto gpt2 = test::random_gpt2(serving_model(), 3, true);
    const ModelConfig& g = gpt2->config();
    KvBlockPool pool(be, g.n_layers, 4, 4, g.kv_dim());
    auto runner = gpt2->make_paged_runner(be, 1, pool);
    CHECK_THROWS_WITH(runner->set_window(2, 6, SinkPositions::Cache),
                      Catch::Contains("GPT-2 learns its positions"));
    runner->set_window(2, 6, SinkPositions::Original);
}

TEST_CASE("a bounded cache serves past the model's context, the full cache stops at it",
          "[serving][window]") {
    // Context 64: 100 new tokens after a 6-token prompt.
    const std::vector<int> prompt = serving_ids(810, 6);
    CpuBackend be;
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.max_new_tokens = 100;
    const ServeRun full =
        run_serve(serving_model(), be, cfg, std::vector<std::vector<int>>{prompt});
    CHECK(full.requests[0].finish == FinishReason::ContextFull);
    CHECK(full.requests[0].tokens.size() == 65);  // the last one sampled at position 64
    cfg.window = 16;
    cfg.sinks = 4;
    for (SinkPositions pos : {SinkPositions::Cache, SinkPositions::Original}) {
        cfg.sink_positions = pos;
        const ServeRun run =
            run_serve(serving_model(), be, cfg, std::vector<std::vector<int>>{prompt});
        const ServeRequest& r = run.requests[0];
        CHECK(r.finish == FinishReason::LengthLimit);
        CHECK(r.tokens.size() == 106);
        // Its sinks' block and the window's: a bounded cache whatever the length.
        CHECK(run.stats.peak_blocks <= 1 + 5 + 1);
        // Within the context, the text the full cache's run began with is compared (teacher-
        // forced); none of it is cut off.
        const CacheEffect e = serve_window_effect(serving_model(), be, run);
        CHECK(e.passes == 64 - 6 + 1);
    }
}

TEST_CASE("StreamingLLM's comparison: perplexity within the context and past it",
          "[serving][window]") {
    // A 150-token text (context 64) one token a pass: the full cache scores the 63 tokens after
    // the first within the context; each bounded cache scores those and the 86 past it.
    CpuBackend be;
    const std::vector<int> text = serving_ids(820, 150);
    const StreamEffect e = stream_effect(serving_model(), be, text, 4, 12, 4);
    CHECK(e.tokens == 150);
    CHECK(e.context == 64);
    CHECK(e.full.scored_within == 63);
    CHECK(e.full.scored_past == 0);
    for (const Perplexity* p : {&e.sinks_cache, &e.sinks_original, &e.no_sinks}) {
        CHECK(p->scored_within == 63);
        CHECK(p->scored_past == 86);
        CHECK(p->within > 1);
        CHECK(p->past > 1);
        CHECK(std::isfinite(p->past));
    }
    // Until the window slides past the sinks both numberings are one: the first scores agree.
    CHECK(e.full.within > 1);
    CHECK_THROWS_WITH(stream_effect(serving_model(), be, std::vector<int>{5}, 4, 12, 4),
                      Catch::Contains("measured on 1 tokens"));
}
