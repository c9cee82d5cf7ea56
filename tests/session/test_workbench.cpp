// The Workbench (core/session/workbench.h): one session or the compare pair, stepped together, with
// the cached-versus-uncached logit difference per step; its settings change all sessions or none.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/loaders/model_loader.h"
#include "core/session/workbench.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/mask_deltas.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {
std::shared_ptr<const Model> tiny() {
    static std::shared_ptr<const Model> m = test::open_tiny_model("workbench");
    return m;
}
}  // namespace

TEST_CASE(
    "bidirectional: appending a token moves the earlier K/V rows from layer 1 on, never "
    "in layer 0 nor with the causal mask (CPU fast and reference ops)",
    "[workbench][mask]") {
    const auto model = open_model("default");
    CpuBackend fast, reference;
    reference.set_reference_ops(true);
    for (CpuBackend* be : {&fast, &reference}) {
        INFO((be->reference_ops() ? "reference ops" : "fast ops"));
        test::check_mask_deltas(*model, *be, "Once upon a time");
    }
    // The same from the command line: kvscope-cli mask --json.
    const auto r = test::run_cli({"mask", "--model", "default", "--backend", "cpu", "--prompt",
                                  "Once upon a time", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto& bk = j.at("bidirectional").at("max_delta_k");
    REQUIRE(bk.size() == std::size_t(model->config().n_layers));
    CHECK(bk[0] == 0);
    for (std::size_t l = 1; l < bk.size(); ++l) CHECK(bk[l].get<double>() > 1e-4);
    for (const auto& d : j.at("causal").at("max_delta_k")) CHECK(d == 0);
    const auto toy = test::run_cli({"mask", "--model", "toy"});
    CHECK(toy.exit_code == 2);
    CHECK(toy.err.find("toy") != std::string::npos);
    // The toy's heads are rules: it refuses the view in one line.
    CpuBackend be;
    Workbench wb(be);
    wb.set_view(CacheView::Bidirectional);
    try {
        wb.open(open_model("toy"), "Today weather is so");
        FAIL("the toy has no keys to unmask");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("toy") != std::string::npos);
    }
}

TEST_CASE("compare mode steps the cached session and its uncached twin together", "[workbench]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 4;
    Workbench wb(be, cfg);
    // What whoever shows the sessions hears: each step's record as it is when it is told.
    std::vector<std::pair<std::size_t, bool>> told;  // session, its newest step timed in turn
    Workbench::Hooks hooks;
    hooks.stepped = [&](std::size_t i) {
        told.push_back({i, wb.session(i).trace().back().timed_in_turn});
    };
    wb.set_hooks(hooks);
    wb.set_view(CacheView::Compare);
    CHECK(wb.open(tiny(), "the cat").empty());
    REQUIRE(wb.sessions() == 2);
    CHECK(wb.session(0).config().mode == CacheMode::Cached);
    CHECK(wb.session(1).config().mode == CacheMode::Uncached);
    // The two prefills are the same work: timed in turn, and told only once both times are in.
    wb.step();
    CHECK(told == std::vector<std::pair<std::size_t, bool>>{{0, true}, {1, true}});
    for (std::size_t i = 0; i < 2; ++i) {
        const StepRecord& p = wb.session(i).trace().back();
        CHECK(p.timed_in_turn);
        CHECK(p.timing_runs % 2 == 0);  // as many rounds led by each
        CHECK(p.forward_min_seconds <= p.forward_seconds);
        CHECK(p.forward_seconds <= p.forward_max_seconds);
        CHECK(p.wall_seconds >= p.forward_seconds);
    }
    int steps = 1;
    while (!wb.finished()) {
        wb.step();
        ++steps;
    }
    CHECK(steps == 4);  // the prefill chooses the first of the 4 new tokens, 3 decode steps
    REQUIRE(wb.logit_differences().size() == 4);
    for (double d : wb.logit_differences()) CHECK(d <= 1e-4);
    CHECK(wb.session(0).tokens() == wb.session(1).tokens());
    const StepRecord& c = wb.session(0).trace().back();
    const StepRecord& u = wb.session(1).trace().back();
    CHECK(c.tokens_processed == 1);
    CHECK(u.tokens_processed == u.kv.len);  // the whole sequence again
    wb.reset();
    CHECK_FALSE(wb.prefilled());
    CHECK(wb.logit_differences().empty());
}

TEST_CASE("compare mode started mid-run: the twin replays the steps, old logits from a kept copy",
          "[workbench]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.trace_budget = 0;  // the sessions keep only the newest step's payload, as in the window
    Workbench wb(be, cfg);
    // The window's snapshot keeps every step; here a copy of session 0's steps.
    std::vector<StepRecord> kept;
    Workbench::Hooks h;
    h.stepped = [&](std::size_t i) {
        if (i == 0) kept.push_back(wb.session(0).trace().back());
    };
    wb.set_hooks(h);
    REQUIRE(wb.open(tiny(), "the cat").empty());
    for (int i = 0; i < 3; ++i) wb.step();
    REQUIRE(kept.size() == 3);

    SECTION("without a kept copy the evicted steps have no difference") {
        wb.set_view(CacheView::Compare);
        REQUIRE(wb.sessions() == 2);
        CHECK(wb.session(1).trace().steps().size() == 3);
        REQUIRE(wb.logit_differences().size() == 3);
        CHECK(std::isnan(wb.logit_differences()[0]));
        CHECK(std::isnan(wb.logit_differences()[1]));
        CHECK(wb.logit_differences()[2] <= 1e-4);  // the newest step kept its logits
    }
    SECTION("with one, every step is compared") {
        h.kept_step = [&](std::size_t i, std::size_t k) -> const StepRecord* {
            return i == 0 && k < kept.size() ? &kept[k] : nullptr;
        };
        wb.set_hooks(h);
        wb.set_view(CacheView::Compare);
        REQUIRE(wb.logit_differences().size() == 3);
        for (double d : wb.logit_differences()) CHECK(d <= 1e-4);
        wb.step();
        CHECK(wb.logit_differences().size() == 4);
        // Back to the cache alone: the twin goes, session 0 goes on where it was.
        wb.set_view(CacheView::On);
        CHECK(wb.sessions() == 1);
        CHECK(wb.session(0).trace().steps().size() == 4);
        CHECK(wb.logit_differences().empty());
    }
}

TEST_CASE("a setting the model refuses changes nothing, a refused prompt on open is said",
          "[workbench]") {
    CpuBackend be;
    Workbench wb(be);
    int generations = 0;
    Workbench::Hooks h;
    h.changed = [&](bool new_generation) { generations += new_generation; };
    wb.set_hooks(h);
    REQUIRE(wb.open(tiny(), "the cat").empty());
    wb.step();
    const int seen = generations;
    // tiny's context is 64 tokens: no room for 200 new ones.
    CHECK_THROWS_AS(wb.set_limit(200), Error);
    CHECK(wb.limit() == -1);
    CHECK(wb.prefilled());  // the sessions were not rebuilt
    CHECK(generations == seen);
    const std::string long_prompt(400, 'a');
    CHECK_THROWS_AS(wb.set_prompt(long_prompt), Error);
    CHECK(wb.prompt() == "the cat");
    CHECK(wb.prefilled());

    const std::string why = wb.open(tiny(), long_prompt);
    CHECK(why.find("context") != std::string::npos);
    CHECK(wb.prompt().empty());
    REQUIRE(wb.sessions() == 1);
    wb.step();  // BOS alone: the new sessions still step
    CHECK(wb.prefilled());
}
