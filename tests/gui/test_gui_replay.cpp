// A run the window recorded, exported and replayed: every view's numbers (attention matrix of
// every layer and head, KV grid, Inside attention, op strip, times, logit differences) are the
// live run's; a replay refuses to run steps and gives way to a model that opens.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "core/loaders/model_loader.h"
#include "core/session/attention_explain.h"
#include "gui/engine/engine_worker.h"
#include "gui/views/attention_matrix.h"
#include "gui/views/kv_grid.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using test::tiny_model;
using namespace kvs::gui;

namespace {

bool same(double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b)) ||
           std::fabs(a - b) <= 1e-8 * std::max(std::fabs(a), std::fabs(b));
}

// What each panel reads of session `s` at step `k`, in the live snapshot and the replayed one.
void check_views(const EngineSnapshot& live, const EngineSnapshot& replay, std::size_t s, int k) {
    INFO("session " << s << ", step " << k);
    const auto& a = live.sessions[s].trace.steps();
    const auto& b = replay.sessions[s].trace.steps();
    const ModelConfig& c = live.model->config();
    // The attention heatmap of every layer and head.
    const AttentionMatrixRows ma = collect_attention_rows(a, k), mb = collect_attention_rows(b, k);
    REQUIRE(ma.n == mb.n);
    CHECK(ma.new_begin == mb.new_begin);
    CHECK(ma.new_end == mb.new_end);
    int cells = 0;
    for (int l = 0; l < c.n_layers; ++l)
        for (int h = 0; h < c.n_heads; ++h)
            for (int q = 0; q < ma.n; ++q)
                for (int key = 0; key <= q; ++key) {
                    const CellValue x = attention_cell(ma, l, h, q, key);
                    const CellValue y = attention_cell(mb, l, h, q, key);
                    cells += x.kind == CellKind::Weight;
                    if (x.kind != y.kind || x.weight != y.weight) FAIL_CHECK("cell differs");
                }
    CHECK(cells > 0);
    // The KV cache grid.
    const KvGridColumns ga = collect_kv_columns(a, k), gb = collect_kv_columns(b, k);
    REQUIRE(ga.n == gb.n);
    CHECK((ga.written_begin == gb.written_begin && ga.written_end == gb.written_end));
    for (int l = 0; l < c.n_layers; ++l) {
        CHECK(kv_colour_scale(ga, l) == kv_colour_scale(gb, l));
        for (int pos = 0; pos < ga.n; ++pos)
            for (int kv = 0; kv < 2; ++kv)
                for (int ch = 0; ch < ga.kv_dim; ++ch)
                    if (!same(kv_value(ga, l, kv, pos, ch), kv_value(gb, l, kv, pos, ch)))
                        FAIL_CHECK("K/V value differs");
    }
    // Inside attention: every row the step kept, of every head, from q, K and V to the output.
    int explained = 0;
    for (int l = 0; l < c.n_layers; ++l)
        for (int h = 0; h < c.n_heads; ++h)
            for (int row = 0; row < a[k].attention.rows; ++row) {
                std::string why_a, why_b;
                const auto ea = explain_attention(live.sessions[s].trace, c, k, l, h, row, &why_a);
                const auto eb = explain_attention(replay.sessions[s].trace, replay.model->config(),
                                                  k, l, h, row, &why_b);
                REQUIRE(ea.has_value() == eb.has_value());
                CHECK(why_a == why_b);
                if (!ea) continue;
                ++explained;
                CHECK(ea->q == eb->q);
                CHECK(ea->k == eb->k);
                CHECK(ea->v == eb->v);
                CHECK(ea->source == eb->source);
                CHECK(ea->raw == eb->raw);
                CHECK(ea->weights == eb->weights);
                CHECK(ea->output == eb->output);
                CHECK(ea->model_output == eb->model_output);
            }
    CHECK(explained == c.n_layers * c.n_heads * a[k].attention.rows);
    // The op strip and the times.
    REQUIRE(a[k].ops.ops.size() == b[k].ops.ops.size());
    for (std::size_t i = 0; i < a[k].ops.ops.size(); ++i) {
        CHECK(a[k].ops.ops[i].kind == b[k].ops.ops[i].kind);
        CHECK(same(a[k].ops.ops[i].seconds, b[k].ops.ops[i].seconds));
        CHECK(same(a[k].ops.ops[i].flops, b[k].ops.ops[i].flops));
    }
    CHECK(same(a[k].wall_seconds, b[k].wall_seconds));
    CHECK(same(a[k].forward_min_seconds, b[k].forward_min_seconds));
    CHECK(a[k].timing_runs == b[k].timing_runs);
    CHECK(a[k].device == b[k].device);
    CHECK(same(a[k].counts.flops, b[k].counts.flops));
    CHECK(a[k].kv.bytes() == b[k].kv.bytes());
    CHECK(a[k].top.size() == b[k].top.size());
}

}  // namespace

TEST_CASE("a replayed run shows every view's numbers as the live run showed them",
          "[gui][worker][replay]") {
    const auto dir = test::temp_dir("gui-replay-run");
    const std::string trace = (dir / "run.trace.json").string();
    EngineWorker live;
    live.open_model(tiny_model(), {}, {}, "the cat sat");
    live.set_cache(CacheView::Compare);
    live.decode(4);
    live.export_run({{ExportFile::Kind::TraceJson, trace}});
    live.wait_idle();
    EngineWorker replay;
    replay.open_replay(trace);
    replay.wait_idle();
    {
        auto la = live.lock();
        auto lb = replay.lock();
        const EngineSnapshot &a = live.snapshot(), &b = replay.snapshot();
        INFO(a.error << " / " << b.error);
        REQUIRE(a.error.empty());
        REQUIRE(b.error.empty());
        CHECK(a.exported == std::vector<std::string>{trace});
        REQUIRE(b.replay);
        CHECK(b.replay->path == trace);
        CHECK(b.replay->recorded.program == "kvscope");
        CHECK(b.replay->recorded.device == a.sessions[0].trace.back().device);
        CHECK(b.cache == CacheView::Compare);
        CHECK(b.model->name() == a.model->name());
        CHECK(b.model->config().n_kv_heads == a.model->config().n_kv_heads);
        REQUIRE(b.sessions.size() == 2);
        REQUIRE(b.logit_max_diff.size() == a.logit_max_diff.size());
        for (std::size_t i = 0; i < a.logit_max_diff.size(); ++i)
            CHECK(same(a.logit_max_diff[i], b.logit_max_diff[i]));
        for (std::size_t s = 0; s < 2; ++s) {
            CHECK(a.sessions[s].mode == b.sessions[s].mode);
            CHECK(a.sessions[s].prompt_tokens == b.sessions[s].prompt_tokens);
            CHECK(a.sessions[s].finish_reason == b.sessions[s].finish_reason);
            REQUIRE(a.sessions[s].trace.steps().size() == b.sessions[s].trace.steps().size());
            for (int k = 0; k < a.steps(); ++k) check_views(a, b, s, k);
            for (int t : a.sessions[s].prompt_tokens)
                CHECK(a.model->tokenizer().piece(t) == b.model->tokenizer().piece(t));
        }
    }
    // A replay runs no step and keeps what it shows; a model that opens ends it.
    replay.decode(1);
    replay.set_cache(CacheView::On);
    replay.wait_idle();
    {
        auto lock = replay.lock();
        CHECK(replay.snapshot().error.find("a recorded run") == 0);
        CHECK(replay.snapshot().steps() == 5);
        CHECK(replay.snapshot().cache == CacheView::Compare);
    }
    replay.open_model(tiny_model(), {}, {}, "the cat");
    replay.prefill();
    replay.wait_idle();
    auto lock = replay.lock();
    CHECK(replay.snapshot().error.empty());
    CHECK(replay.snapshot().replay == nullptr);
    CHECK(replay.snapshot().steps() == 1);
}

TEST_CASE(
    "a file that is not a trace changes nothing shown, and there is nothing to export before a "
    "model",
    "[gui][worker][replay]") {
    const auto dir = test::temp_dir("gui-replay-bad");
    EngineWorker w;
    w.export_run({{ExportFile::Kind::StepsCsv, (dir / "x.csv").string()}});
    w.open_replay(tiny_model());  // a model file, not a trace
    w.wait_idle();
    auto lock = w.lock();
    CHECK(w.snapshot().error.find("not a kvscope trace") != std::string::npos);
    CHECK(w.snapshot().error_task == EngineTask::OpenReplay);
    CHECK(w.snapshot().replay == nullptr);
    CHECK(!std::filesystem::exists(dir / "x.csv"));
}
