// The window's data side, without a display: the attention matrix and KV grid put back together
// from a trace, their pixels, the what-if formula, options, settings, and the engine worker that
// hands steps from its thread to the window.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/loaders/model_loader.h"
#include "core/model/kv_what_if.h"
#include "core/serving/serve_trace.h"
#include "core/session/session.h"
#include "core/session/step_rows.h"
#include "core/util/error.h"
#include "gui/draw/theme.h"
#include "gui/engine/engine_worker.h"
#include "gui/state/dropped_paths.h"
#include "gui/state/options.h"
#include "gui/state/settings.h"
#include "gui/views/attention_matrix.h"
#include "gui/views/chip_flow.h"
#include "gui/views/colormap.h"
#include "gui/views/engine_words.h"
#include "gui/views/kv_grid.h"
#include "gui/views/panel_layout.h"
#include "gui/views/plot_scale.h"
#include "gui/views/serving_layout.h"
#include "gui/views/time_series.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/option_table_checks.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using namespace kvs::gui;

namespace {

std::vector<Rgba> row_pixels(const AttentionMatrixRows& m, int l, int h, int q, int width,
                             const HeatmapPalette& pal) {
    std::vector<Rgba> px(width);
    attention_row_pixels(m, l, h, q, width, pal, px.data());
    return px;
}

// Keeps argv strings alive for parse_options.
AppOptions parse(std::vector<std::string> args) {
    args.insert(args.begin(), "kvscope");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return parse_options(static_cast<int>(argv.size()), argv.data());
}

struct EnvVar {
    std::string name, old;
    bool had;
    EnvVar(const char* n, const std::string& v) : name(n) {
        const char* o = std::getenv(n);
        had = o != nullptr;
        if (had) old = o;
        if (v.empty())
            ::unsetenv(n);
        else
            ::setenv(n, v.c_str(), 1);
    }
    ~EnvVar() {
        if (had)
            ::setenv(name.c_str(), old.c_str(), 1);
        else
            ::unsetenv(name.c_str());
    }
};

}  // namespace

TEST_CASE("a weight never takes the mask colour, in either theme and any scale", "[gui]") {
    for (bool dark : {true, false})
        for (WeightScale s : {WeightScale::Linear, WeightScale::Sqrt, WeightScale::Log}) {
            const HeatmapPalette pal = palette_for(dark, s);
            CHECK(!(pal.mask == pal.empty_row));
            CHECK(!(pal.mask == pal.missing));
            for (int i = 0; i <= 1000; ++i) {
                const Rgba c = weight_colour(i / 1000.0f, s);
                REQUIRE(!(c == pal.mask));
                REQUIRE(!(c == pal.empty_row));
            }
        }
    // The map runs dark to light: a larger weight is brighter.
    auto lum = [](Rgba c) { return 0.3 * c.r + 0.59 * c.g + 0.11 * c.b; };
    CHECK(lum(weight_colour(1.0f, WeightScale::Linear)) >
          lum(weight_colour(0.5f, WeightScale::Linear)));
    CHECK(lum(weight_colour(0.5f, WeightScale::Linear)) >
          lum(weight_colour(0.0f, WeightScale::Linear)));
    CHECK(scale_weight(0.25f, WeightScale::Sqrt) == Approx(0.5f));
    CHECK(scale_weight(1e-5f, WeightScale::Log) == 0.0f);
}

TEST_CASE("prefill gives the causal triangle and each decode step adds exactly one row",
          "[gui][attention]") {
    CpuBackend be;
    Session s(test::shared_tiny_model(), be);
    s.set_prompt("the cat sat in the hat");
    const int P = s.prompt_len();
    REQUIRE(P >= 4);
    const HeatmapPalette pal = palette_for(true, WeightScale::Sqrt);
    const int L = test::shared_tiny_model().config().n_layers,
              H = test::shared_tiny_model().config().n_heads;

    s.step();
    const auto m0 = collect_attention_rows(s.trace().steps(), 0);
    REQUIRE(m0.n == P);
    CHECK(m0.n_layers == L);
    CHECK(m0.n_heads == H);
    CHECK(m0.new_begin == 0);
    CHECK(m0.new_end == P);
    std::vector<std::vector<Rgba>> before;
    for (int q = 0; q < P; ++q) {
        const auto px = row_pixels(m0, L - 1, H - 1, q, P, pal);
        const auto w = s.trace().steps()[0].attention.row(L - 1, H - 1, q);
        for (int k = 0; k < P; ++k) {
            if (k > q) {
                CHECK(px[k] == pal.mask);
                CHECK(attention_cell(m0, L - 1, H - 1, q, k).kind == CellKind::Masked);
            } else {
                CHECK(px[k] == weight_colour(w[k], pal.scale));
                const CellValue v = attention_cell(m0, L - 1, H - 1, q, k);
                CHECK(v.kind == CellKind::Weight);
                CHECK(v.weight == w[k]);
            }
        }
        before.push_back(px);
    }

    s.step();
    s.step();
    const auto m1 = collect_attention_rows(s.trace().steps(), 1);
    const auto m2 = collect_attention_rows(s.trace().steps(), 2);
    CHECK(m1.n == P + 1);
    CHECK(m2.n == P + 2);
    CHECK(m1.new_begin == P);
    CHECK(m1.new_end == P + 1);
    CHECK(m2.new_begin == P + 1);
    CHECK(m2.new_end == P + 2);
    // Old rows unchanged (and still the prefill's); the new row is the decode step's.
    for (int q = 0; q < P; ++q) {
        CHECK(m2.rows[q].step == 0);
        auto px = row_pixels(m2, L - 1, H - 1, q, P, pal);
        CHECK(px == before[q]);
    }
    CHECK(m2.rows[P].step == 1);
    CHECK(m2.rows[P + 1].step == 2);
    const auto last = row_pixels(m2, 0, 0, P + 1, P + 2, pal);
    for (int k = 0; k < P + 2; ++k) CHECK(!(last[k] == pal.mask));
    // Scrubbing back to step 1 shows one row fewer.
    const auto row_at_1 = row_pixels(m1, 0, 0, P + 1, P + 2, pal);
    for (const Rgba& c : row_at_1) CHECK(c == pal.mask);
}

TEST_CASE("uncached decode steps rebuild the same matrix from their single new rows",
          "[gui][attention]") {
    CpuBackend b1, b2;
    SessionConfig cu;
    cu.mode = CacheMode::Uncached;
    Session cached(test::shared_tiny_model(), b1), uncached(test::shared_tiny_model(), b2, cu);
    for (Session* s : {&cached, &uncached}) {
        s->set_prompt("a cat in the hat");
        for (int i = 0; i < 4; ++i) s->step();
    }
    const auto a = collect_attention_rows(cached.trace().steps(), 3);
    const auto b = collect_attention_rows(uncached.trace().steps(), 3);
    REQUIRE(a.n == b.n);
    CHECK(b.new_end - b.new_begin == 1);
    for (int q = 0; q < a.n; ++q)
        for (int k = 0; k <= q; ++k)
            CHECK(attention_cell(a, 1, 2, q, k).weight ==
                  Approx(attention_cell(b, 1, 2, q, k).weight).margin(1e-5));
}

TEST_CASE("rows whose payload was dropped are reported missing, not invented", "[gui][attention]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.trace_budget = 1;  // keep only the newest step's payload
    Session s(test::shared_tiny_model(), be, cfg);
    s.set_prompt("the cat");
    for (int i = 0; i < 3; ++i) s.step();
    const auto m = collect_attention_rows(s.trace().steps(), 2);
    const HeatmapPalette pal = palette_for(false, WeightScale::Linear);
    CHECK(attention_cell(m, 0, 0, 0, 0).kind == CellKind::Missing);
    CHECK(row_pixels(m, 0, 0, 0, m.n, pal)[0] == pal.missing);
    CHECK(attention_cell(m, 0, 0, m.n - 1, 0).kind == CellKind::Weight);
}

TEST_CASE("the toy's head without a key shows as an empty row", "[gui][attention][toy]") {
    auto toy = open_model("toy");
    CpuBackend be;
    Session s(*toy, be);
    s.set_prompt("Today weather is so");
    s.step();
    const auto m = collect_attention_rows(s.trace().steps(), 0);
    const HeatmapPalette pal = palette_for(true, WeightScale::Linear);
    // Head 0 ("even") has nothing to attend to at the first token.
    CHECK(attention_cell(m, 0, 0, 0, 0).kind == CellKind::EmptyRow);
    CHECK(row_pixels(m, 0, 0, 0, m.n, pal)[0] == pal.empty_row);
    CHECK(attention_cell(m, 0, 1, 0, 0).kind == CellKind::Weight);
}

TEST_CASE("the KV grid has one column per cached token, from the steps that wrote them",
          "[gui][kv]") {
    CpuBackend b1, b2;
    SessionConfig cu;
    cu.mode = CacheMode::Uncached;
    Session cached(test::shared_tiny_model(), b1), uncached(test::shared_tiny_model(), b2, cu);
    const ModelConfig& c = test::shared_tiny_model().config();
    for (Session* s : {&cached, &uncached}) {
        s->set_prompt("the cat sat");
        for (int i = 0; i < 3; ++i) s->step();
    }
    const int P = cached.prompt_len();
    const auto g0 = collect_kv_columns(cached.trace().steps(), 0);
    CHECK(g0.n == P);
    CHECK(g0.kv_dim == c.kv_dim());
    CHECK(g0.written_begin == 0);
    CHECK(g0.written_end == P);
    const auto g = collect_kv_columns(cached.trace().steps(), 2);
    CHECK(g.n == P + 2);
    CHECK(static_cast<int>(g.cols.size()) == P + 2);
    CHECK(g.written_begin == P + 1);  // one column written by a cached step
    CHECK(g.written_end == P + 2);
    CHECK(g.query_pos == P + 1);
    // Values are the prefill's K/V rows: [n_layers, 2, rows, kv_dim].
    const StepRecord& pre = cached.trace().steps()[0];
    for (int l = 0; l < c.n_layers; ++l)
        for (int kv = 0; kv < 2; ++kv)
            for (int ch = 0; ch < c.kv_dim(); ch += 3)
                CHECK(kv_value(g, l, kv, 1, ch) ==
                      pre.kv_rows[((std::size_t(l) * 2 + kv) * P + 1) * c.kv_dim() + ch]);
    // The decode step's own column.
    const StepRecord& d2 = cached.trace().steps()[2];
    CHECK(kv_value(g, 1, 1, P + 1, 0) == d2.kv_rows[((1 * 2 + 1) * 1 + 0) * c.kv_dim() + 0]);
    // Without the cache a decode step rewrites every column.
    const auto gu = collect_kv_columns(uncached.trace().steps(), 2);
    CHECK(gu.n == P + 2);
    CHECK(gu.written_begin == 0);
    CHECK(gu.written_end == P + 2);
    for (int p = 0; p < gu.n; ++p)
        CHECK(kv_value(gu, 0, 0, p, 0) == Approx(kv_value(g, 0, 0, p, 0)).margin(1e-5));
    // Pixels: 2 x kv_dim per column, none missing.
    std::vector<Rgba> col(2 * g.kv_dim);
    const Rgba missing{1, 2, 3, 255};
    kv_column_pixels(g, 0, P, kv_colour_scale(g, 0), missing, col.data());
    for (const Rgba& px : col) CHECK(!(px == missing));
    CHECK(kv_colour_scale(g, 0) > 0);
    CHECK(kv_colour_scale(g, 0) <= kv_abs_max(g, 0));
}

TEST_CASE("a cache read whole from its slot is the same grid: one column per row it holds",
          "[gui][kv]") {
    // The rows of one cache, [n_layers, 2, len, kv_dim], as lesson 8's batch keeps them.
    const ModelConfig& c = test::shared_tiny_model().config();
    KvShape kv;
    kv.n_layers = c.n_layers;
    kv.capacity = c.seq_len;
    kv.len = 5;
    kv.n_kv_heads = c.n_kv_heads;
    kv.head_dim = c.head_dim();
    const int d = c.kv_dim();
    std::vector<float> rows(std::size_t(kv.n_layers) * 2 * kv.len * d);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = float(i % 97) - 48.0f;
    const auto g = kv_columns_of_cache(kv, rows, 4, 5, 4);
    CHECK(g.n == 5);
    CHECK(g.kv_dim == d);
    CHECK(g.head_dim == c.head_dim());
    CHECK(g.written_begin == 4);
    CHECK(g.written_end == 5);
    CHECK(g.query_pos == 4);
    for (int l = 0; l < kv.n_layers; ++l)
        for (int k = 0; k < 2; ++k)
            for (int p = 0; p < kv.len; ++p)
                for (int ch = 0; ch < d; ch += 5)
                    CHECK(kv_value(g, l, k, p, ch) ==
                          rows[((std::size_t(l) * 2 + k) * kv.len + p) * d + ch]);
    CHECK(std::isnan(kv_value(g, 0, 0, 5, 0)));  // past the rows it holds
    // A sequence the last step did not compute: nothing written, no query.
    const auto done = kv_columns_of_cache(kv, rows, 0, 0, -1);
    CHECK(done.written_begin == done.written_end);
    CHECK(done.query_pos == -1);
    // Rows that are not the whole cache are never read: an empty grid.
    rows.pop_back();
    CHECK(kv_columns_of_cache(kv, rows, 4, 5, 4).n == 0);
}

TEST_CASE("the Time panel's series extended step by step equal the series built at once",
          "[gui][time]") {
    CpuBackend be;
    Session s(test::shared_tiny_model(), be);
    s.set_prompt("the cat sat in the hat");
    for (int i = 0; i < 6; ++i) s.step();
    std::vector<StepRecord> steps(s.trace().steps().begin(), s.trace().steps().end());
    const auto whole = [&](std::span<const StepRecord> st, CacheMode mode) {
        TimeSeries t;
        update_time_series(t, 7, test::shared_tiny_model(), mode, st);
        return t;
    };
    const auto same = [](const TimeSeries& a, const TimeSeries& b) {
        CHECK(a.positions == b.positions);
        CHECK(a.wall == b.wall);
        CHECK(a.total == b.total);
        CHECK(a.flops == b.flops);
        CHECK(a.kv_bytes == b.kv_bytes);
        CHECK(a.weight_bytes == b.weight_bytes);
        CHECK(a.other_flops == b.other_flops);
        CHECK(a.other_kv == b.other_kv);
    };
    // One step more each frame, as the window sees the trace grow.
    TimeSeries grown;
    for (std::size_t n = 0; n <= steps.size(); ++n) {
        const std::span<const StepRecord> first(steps.data(), n);
        update_time_series(grown, 7, test::shared_tiny_model(), CacheMode::Cached, first);
        same(grown, whole(first, CacheMode::Cached));
    }
    // Each value is the step's own, or counted from the model at the step's position.
    const TimeSeries& t = grown;
    REQUIRE(t.wall.size() == steps.size());
    double acc = 0;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        acc += steps[k].wall_seconds;
        CHECK(t.total[k] == acc);
        CHECK(t.positions[k] == steps[k].kv.len);
        const StepCounts c =
            k == 0 ? steps[k].counts : test::shared_tiny_model().count_forward(0, steps[k].kv.len);
        CHECK(t.other_flops[k] == c.flops);
        CHECK(t.other_kv[k] == c.kv_read_bytes + c.kv_write_bytes);
    }
    // The last step held is read again (the engine may have filled it in since).
    steps.back().wall_seconds += 1.0;
    update_time_series(grown, 7, test::shared_tiny_model(), CacheMode::Cached, steps);
    same(grown, whole(steps, CacheMode::Cached));
    // A new generation, another mode or fewer steps start over.
    steps[1].wall_seconds += 2.0;
    update_time_series(grown, 8, test::shared_tiny_model(), CacheMode::Cached, steps);
    same(grown, whole(steps, CacheMode::Cached));
    update_time_series(grown, 8, test::shared_tiny_model(), CacheMode::Uncached, steps);
    same(grown, whole(steps, CacheMode::Uncached));
    const std::span<const StepRecord> fewer(steps.data(), 3);
    update_time_series(grown, 8, test::shared_tiny_model(), CacheMode::Uncached, fewer);
    same(grown, whole(fewer, CacheMode::Uncached));
}

TEST_CASE("chips laid out a few at a time go where one pass puts them, and the lines in view",
          "[gui][tokens]") {
    const std::vector<float> widths = {30, 50, 20, 90, 100, 10, 10, 120, 40, 40, 60};
    // One pass, as the strip laid its chips out each frame: a chip on the line while it fits
    // (a line's first always does), else on the next.
    std::vector<float> xs;
    std::vector<int> lines;
    float x = 0;
    int line = 0;
    for (float w : widths) {
        if (x + w > 100 && x > 0) x = 0, ++line;
        xs.push_back(x);
        lines.push_back(line);
        x += w + 5;
    }
    ChipFlow flow;
    reset_chip_flow(flow, 1, 100, 5);
    for (std::size_t n = 0; n < widths.size(); n += 3) {
        reset_chip_flow(flow, 1, 100, 5);  // the same key: kept
        for (std::size_t k = flow.x.size(); k < std::min(widths.size(), n + 3); ++k)
            add_chip(flow, widths[k]);
    }
    CHECK(flow.x == xs);
    CHECK(flow.line == lines);
    CHECK(lines == std::vector<int>{0, 0, 1, 2, 3, 4, 4, 5, 6, 6, 7});
    // Lines 1..3 hold chips 2..4; of the first 4 chips, 2..3.
    CHECK(chips_on_lines(flow, 11, 1, 3) == std::pair<int, int>{2, 5});
    CHECK(chips_on_lines(flow, 4, 1, 3) == std::pair<int, int>{2, 4});
    CHECK(chips_on_lines(flow, 11, -4, -1) == std::pair<int, int>{0, 0});
    CHECK(chips_on_lines(flow, 11, 8, 9) == std::pair<int, int>{11, 11});
    // Another key or width starts over.
    reset_chip_flow(flow, 2, 100, 5);
    CHECK(flow.x.empty());
    add_chip(flow, 10);
    reset_chip_flow(flow, 2, 80, 5);
    CHECK(flow.x.empty());
}

TEST_CASE("KV what-if: bytes per token for MHA, GQA and MQA from the config", "[gui][kv]") {
    ModelConfig c;
    c.dim = 64;
    c.n_heads = 8;
    c.n_kv_heads = 4;
    c.n_layers = 5;
    const auto v = kv_what_if(c);
    REQUIRE(v.size() == 4);  // 8, 4, 2, 1 K/V heads
    CHECK(v[0].kind == "MHA");
    CHECK(v[0].n_kv_heads == 8);
    CHECK(v[1].kind == "GQA");
    CHECK(v[1].is_model);
    CHECK(v[3].kind == "MQA");
    CHECK(v[3].n_kv_heads == 1);
    // 2 (K, V) x 5 layers x kv heads x head_dim 8 x 4 bytes
    CHECK(v[0].bytes_per_token == 2 * 5 * 8 * 8 * 4);
    CHECK(v[1].bytes_per_token == 2 * 5 * 4 * 8 * 4);
    CHECK(v[3].bytes_per_token == 2 * 5 * 1 * 8 * 4);
    CHECK(c.kv_bytes_per_token() == v[1].bytes_per_token);  // the one formula, at 4 B
    CHECK(c.kv_bytes_per_token(2) == 2 * 5 * 4 * 8 * 2);
    // The model's own layout agrees with what its KV cache reports.
    CpuBackend be;
    Session s(test::shared_tiny_model(), be);
    s.set_prompt("the cat");
    s.step();
    CHECK(kv_bytes_per_token(test::shared_tiny_model().config(),
                             test::shared_tiny_model().config().n_kv_heads) ==
          s.trace().back().kv.bytes_per_token());
}

TEST_CASE("command-line options: values, and one-line errors", "[gui][options]") {
    const AppOptions o = parse({"--model", "toy", "--decode=3", "--cache", "compare", "--size",
                                "800x600", "--screenshot", "a.png", "--layout-json", "a.json",
                                "--layer", "1", "--head", "2", "--prefill"});
    CHECK(o.model == "toy");
    CHECK(o.decode == 3);
    CHECK(o.cache == CacheView::Compare);
    CHECK(o.width == 800);
    CHECK(o.height == 600);
    CHECK(o.headless());
    CHECK(o.layer == 1);
    CHECK(o.head == 2);
    CHECK(o.prefill);
    CHECK_FALSE(parse({}).headless());
    CHECK_THROWS_AS(parse({"--bogus"}), Error);
    CHECK_THROWS_AS(parse({"--decode", "-1"}), Error);
    CHECK_THROWS_AS(parse({"--decode"}), Error);
    CHECK_THROWS_AS(parse({"--cache", "maybe"}), Error);
    CHECK_THROWS_AS(parse({"--size", "big"}), Error);
    // The layout record alone is one headless frame, as with a screenshot; not with the
    // many-frame runs.
    CHECK(parse({"--layout-json", "x.json"}).headless());
    CHECK_THROWS_AS(parse({"--layout-json", "x.json", "--frame-stats", "3"}), Error);
    CHECK_THROWS_AS(parse({"--layout-json", "x.json", "--soak-steps", "3"}), Error);
    CHECK_THROWS_AS(parse({"--prefill=yes"}), Error);
    const AppOptions l = parse({"--lesson", "3", "--lesson-step", "2", "--lang", "zh"});
    CHECK(l.lesson == 3);
    CHECK(l.lesson_step == 2);
    CHECK(l.lang == std::string("zh"));
    CHECK_FALSE(l.headless());
    CHECK(parse({"--soak-steps", "10"}).headless());
    CHECK_THROWS_AS(parse({"--lang", "fr"}), Error);
    CHECK_THROWS_AS(parse({"--lesson", "0"}), Error);
    CHECK_THROWS_AS(parse({"--lesson-step", "0"}), Error);
    CHECK_THROWS_AS(parse({"--open", "x.bin"}), Error);  // headless only
    CHECK_THROWS_AS(parse({"--soak-steps", "5", "--frame-stats", "5"}), Error);
    try {
        parse({"--theme", "purple"});
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
        CHECK(std::string(e.what()).find("light, dark") != std::string::npos);
    }
}

// The window's help lists what each option takes, from the rule it is checked with; what
// kvscope-cli takes the window takes too (-c), or refuses by name (--weights), and a model is its
// one word.
TEST_CASE("the window's help is what its command line takes", "[gui][options]") {
    test::check_option_table("kvscope", window_options());
    CHECK(usage().find("--weights") == std::string::npos);
    try {
        parse({"--weights", "f16"});
        FAIL("--weights was taken");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("the window keeps a model's weights as the file stores "
                                         "them") != std::string::npos);
    }
    CHECK(parse({"-c", "64"}).context == 64);
    CHECK(parse({"--ctx-size", "128"}).context == 128);
    CHECK_THROWS_AS(parse({"-c", "0"}), Error);
    CHECK(parse({"model.gguf"}).model == "model.gguf");
    CHECK(parse({"--decode", "2", "toy"}).model == "toy");
    CHECK_THROWS_AS(parse({"toy", "--model", "default"}), Error);
    // A screenshot is written as its name says, or refused by name.
    CHECK(parse({"--screenshot", "x.jpg"}).screenshot == "x.jpg");
    CHECK(parse({"--screenshot", "x.JPEG"}).screenshot == "x.JPEG");
    CHECK(parse({"--screenshot", "/dev/null"}).screenshot == "/dev/null");  // PNG
    try {
        parse({"--screenshot", "x.bmp"});
        FAIL("x.bmp was taken");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("'x.bmp': a screenshot is written as PNG or JPEG") !=
              std::string::npos);
    }
}

// One definition of the options both programs take (cmdline/engine_options.cpp): the window
// takes every value kvscope-cli takes (`--backend cuda-emulated` included) with the same message
// for a bad one.
TEST_CASE("the window and kvscope-cli take and check their shared options alike",
          "[gui][options][cli]") {
    CHECK(parse({"--backend", "cuda-emulated"}).backend == "cuda-emulated");
    CHECK(parse({"--backend=cpu", "--threads", "4"}).threads == 4);
    CHECK(parse({"--prompt", ""}).prompt == std::string());
    CHECK(parse({"--timing-runs", "1"}).timing_runs == 1);
    const AppOptions sampled =
        parse({"--temp", "0.5", "--top-k", "40", "--top-p", "0.8", "-s", "7"});
    CHECK(sampled.temperature == 0.5f);
    CHECK(sampled.top_k == 40);
    CHECK(sampled.top_p == 0.8f);
    CHECK(sampled.seed == 7u);
    CHECK(!parse({}).temperature);  // not given: the settings' sampler
    const std::string suffix = " (see kvscope --help)";
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"--backend", "quantum"},
                                               {"--threads", "0"},
                                               {"--threads", "many"},
                                               {"--timing-runs", "101"},
                                               {"--temperature", "-5"},
                                               {"--top-k", "x"},
                                               {"--top-p", "2"},
                                               {"--seed", "1.5"},
                                               {"--tokenizer", ""},
                                               {"--model", "toy", "--threads"}}) {
        std::string window;
        try {
            parse(args);
        } catch (const Error& e) {
            window = e.what();
        }
        INFO(window);
        REQUIRE(window.size() > suffix.size());
        REQUIRE(window.substr(window.size() - suffix.size()) == suffix);
        std::vector<std::string> cli = {"generate", "--model", "toy"};
        cli.insert(cli.end(), args.begin(), args.end());
        const auto r = test::run_cli(cli);
        CHECK(r.exit_code == 2);
        CHECK(r.err == "kvscope-cli: error: generate: " +
                           window.substr(0, window.size() - suffix.size()) + "\n");
    }
}

TEST_CASE("settings persist in the folder the environment names", "[gui][settings]") {
    const auto dir = test::temp_dir("gui-settings");
    {
        EnvVar a("KVSCOPE_CONFIG_DIR", (dir / "explicit").string());
        CHECK(settings_dir() == (dir / "explicit").string());
    }
    {
        EnvVar a("KVSCOPE_CONFIG_DIR", "");
        EnvVar b("XDG_CONFIG_HOME", (dir / "xdg").string());
        CHECK(settings_dir() == (dir / "xdg" / "kvscope").string());
        EnvVar c("XDG_CONFIG_HOME", "");
        EnvVar d("HOME", (dir / "home").string());
        CHECK(settings_dir() == (dir / "home" / ".config" / "kvscope").string());
    }
    Settings s;
    s.theme = "light";
    s.font_scale = 1.5f;
    s.model = "toy";
    s.prompt = "Today weather is so";
    s.cache = CacheView::Compare;
    s.layer = 2;
    s.head = 3;
    s.temperature = 0.7f;
    s.top_p = 0.95f;
    s.seed = 1234567;
    s.log_time = true;
    s.lang = "zh";
    s.lesson = 4;
    s.lesson_step = 2;
    const std::string path = (dir / "nested" / "settings.txt").string();
    REQUIRE(save_settings(s, path) == "");
    CHECK(load_settings(path) == s);
    CHECK(load_settings((dir / "absent.txt").string()) == Settings());
    // Garbage values keep the defaults.
    test::write_file(dir / "bad.txt",
                     {'f', 'o', 'n', 't', '_', 's', 'c', 'a', 'l', 'e', '=', 'x', '\n'});
    CHECK(load_settings((dir / "bad.txt").string()).font_scale == 1.0f);
    // No lesson open unless the file says so (a first run, with no file, opens lesson 1: main);
    // an unknown language or a lesson number out of range keeps the defaults.
    CHECK(Settings().lesson == 0);
    CHECK(Settings().lang == "en");
    test::write_file(dir / "bad2.txt",
                     std::vector<unsigned char>({'l', 'a', 'n', 'g', '=', 'f', 'r', '\n', 'l', 'e',
                                                 's', 's', 'o', 'n', '=', '-', '3', '\n'}));
    CHECK(load_settings((dir / "bad2.txt").string()).lang == "en");
    CHECK(load_settings((dir / "bad2.txt").string()).lesson == 0);
}

TEST_CASE("the engine worker steps on its thread and publishes the same trace", "[gui][worker]") {
    EngineWorker w;
    w.open_model(test::tiny_model(), {}, {}, "the cat sat");
    w.decode(3);
    w.wait_idle();
    CpuBackend be;
    Session direct(test::shared_tiny_model(), be);
    direct.set_prompt("the cat sat");
    for (int i = 0; i < 4; ++i) direct.step();
    {
        auto lock = w.lock();
        const EngineSnapshot& s = w.snapshot();
        CHECK(s.error.empty());
        REQUIRE(s.sessions.size() == 1);
        const auto& steps = s.sessions[0].trace.steps();
        REQUIRE(steps.size() == 4);  // the prefill, then 3 decode steps
        CHECK(steps[0].phase == Phase::Prefill);
        for (int i = 0; i < 4; ++i) {
            CHECK(steps[i].token_out == direct.trace().steps()[i].token_out);
            CHECK(!steps[i].attention.p.empty());  // payloads kept for the views
            CHECK(!steps[i].kv_rows.empty());
        }
        CHECK(s.sessions[0].prompt_tokens.size() == std::size_t(direct.prompt_len()));
        CHECK_FALSE(s.busy);
    }
    const auto gen = [&] {
        auto lock = w.lock();
        return w.snapshot().generation;
    }();
    w.reset();
    w.wait_idle();
    {
        auto lock = w.lock();
        CHECK(w.snapshot().steps() == 0);
        CHECK(w.snapshot().generation > gen);
    }
}

TEST_CASE("compare mode runs both sessions to the same step, logits equal", "[gui][worker]") {
    EngineWorker w;
    w.open_model(test::tiny_model(), {}, {}, "the cat");
    w.decode(2);
    w.set_cache(CacheView::Compare);  // the uncached twin replays the steps so far
    w.decode(2);
    w.wait_idle();
    auto lock = w.lock();
    const EngineSnapshot& s = w.snapshot();
    CHECK(s.error.empty());
    REQUIRE(s.sessions.size() == 2);
    CHECK(s.sessions[0].mode == CacheMode::Cached);
    CHECK(s.sessions[1].mode == CacheMode::Uncached);
    REQUIRE(s.sessions[0].trace.steps().size() == 5);
    REQUIRE(s.sessions[1].trace.steps().size() == 5);
    REQUIRE(s.logit_max_diff.size() == 5);
    for (double d : s.logit_max_diff) CHECK(d <= 1e-4);
    const auto& u = s.sessions[1].trace.steps();
    CHECK(u[4].tokens_processed == u[4].kv.len);  // the whole sequence again
    CHECK(s.sessions[0].trace.steps()[4].tokens_processed == 1);
}

TEST_CASE("the worker reports a model that will not open, and falls back when asked",
          "[gui][worker]") {
    EngineWorker w;
    w.open_model("/no/such/model.bin");
    w.wait_idle();
    {
        auto lock = w.lock();
        CHECK(w.snapshot().error_serial == 1);
        CHECK(w.snapshot().error.find("/no/such/model.bin") != std::string::npos);
        CHECK(w.snapshot().model == nullptr);
    }
    w.open_model("/no/such/model.bin", {}, {"toy"}, "Today weather is so");
    w.prefill();
    w.wait_idle();
    auto lock = w.lock();
    REQUIRE(w.snapshot().model != nullptr);
    CHECK(w.snapshot().model->is_toy());
    CHECK(w.snapshot().model_note.find("showing toy instead") != std::string::npos);
    CHECK(w.snapshot().steps() == 1);
    CHECK(w.snapshot().error.empty());
}

TEST_CASE("a backend that cannot be had leaves the sessions where they were", "[gui][worker]") {
    EngineWorker w;
    w.open_model("toy", {}, {}, "Today weather is so");
    w.prefill();
    w.set_backend("cuda");
    w.wait_idle();
    auto lock = w.lock();
    const EngineSnapshot& s = w.snapshot();
    const std::string why = cuda_unavailable_reason();
    if (why.empty()) {
        // A CUDA device answered: the sessions moved to it and start over.
        CHECK(s.error.empty());
        CHECK(s.backend_asked == "cuda");
        return;
    }
    CHECK(s.error_task == EngineTask::SwitchBackend);
    CHECK(std::string(failure_words(s.error_task)) == "could not switch the backend");
    CHECK(s.error.find("no usable CUDA device") != std::string::npos);
    CHECK(s.error.find('\n') == std::string::npos);
    CHECK(s.backend_asked != "cuda");  // what runs is what ran before
    CHECK(s.steps() == 1);             // and its prefill is still there
}

TEST_CASE("larger text never draws a graphic smaller, the stage shows fewer panels instead",
          "[gui][stage]") {
    // Window sizes a class meets (below a 2-row toolbar of about 3.5 lines), every text size
    // of the A+ button from 1 to 2 (16 px font), each kind of stage, with the inside-attention
    // panel closed and open (8 keys, the default model after the prefill and 3 steps).
    for (const auto& [W, H] :
         std::vector<std::pair<float, float>>{{1280, 800}, {1920, 1080}, {3840, 2160}}) {
        for (int views : {1, 2})
            for (bool toy : {false, true})
                for (bool lesson : {false, true})
                    for (bool inside : {false, true}) {
                        GraphicCaps at_1;
                        for (float scale = 1.0f; scale <= 2.0f; scale += 0.125f) {
                            StageInput in;
                            in.fh = 16 * scale;
                            in.stage = {0, in.fh * 5.2f, W, H - in.fh * 5.2f};
                            in.views = views;
                            in.toy = toy;
                            in.lesson = lesson;
                            in.inside = inside;
                            in.inside_keys = 8;
                            in.inside_views = views;
                            const StageLayout L = layout_stage(in);
                            INFO(W << "x" << H << " scale " << scale << " views " << views
                                   << " toy " << toy << " lesson " << lesson << " inside " << inside
                                   << ": " << arrangement_name(L.arrangement));
                            if (scale == 1.0f) at_1 = L.drawn;
                            // Only when nothing holds every graphic at its size at text 1 may
                            // one be smaller: measured, only below 3840x2160, at text 1.75 and
                            // above, or above text 1 with the inside panel open at 1280x800 or
                            // beside compare mode's two sessions or a lesson (where the stage
                            // at text 1 already shows one panel at a time beside it, and larger
                            // text takes rows from a panel's height).
                            if (L.squeezed) {
                                CHECK(W <= 1920);
                                const bool crowded = inside && (views == 2 || lesson || W < 1920);
                                CHECK((scale >= 1.75f || crowded));
                            } else {
                                CHECK(L.drawn.heat_side + 0.01f >= at_1.heat_side);
                                CHECK(L.drawn.kv_grid + 0.01f >= at_1.kv_grid);
                                CHECK(L.drawn.plot + 0.01f >= at_1.plot);
                                // The inside panel has the room every key's numbers need,
                                // where it is a band or a column (a tab of the stage has the
                                // whole stage).
                                const StageSlot* x = L.find("inside");
                                if (x && x->tabs.empty()) {
                                    const Box c = content_of(x->box, in.fh, true);
                                    CHECK(c.h + 1 >= inside_need_h(in.fh, 8));
                                    const bool side = c.w + 1 >= inside_need_w(in.fh, views);
                                    CHECK((side || (c.w + 1 >= inside_need_w(in.fh, 1) &&
                                                    c.h + 1 >= views * inside_need_h(in.fh, 8))));
                                }
                            }
                            CHECK((L.find("inside") != nullptr) == inside);
                            // Every panel is reachable: shown, or a tab of a shown group.
                            for (const char* id : {"tokens", "attention", "kv", "time", "next"}) {
                                bool found = false;
                                for (const auto& s : L.slots)
                                    found =
                                        found || s.id == id ||
                                        std::find(s.tabs.begin(), s.tabs.end(), id) != s.tabs.end();
                                CHECK(found);
                            }
                        }
                    }
    }
}

TEST_CASE("a maximised panel has the whole stage, the lesson's panels share it beside the text",
          "[gui][stage]") {
    StageInput in;
    in.stage = {0, 80, 1920, 1000};
    in.fh = 16;
    in.lesson = true;
    in.maximise = "kv";
    StageLayout L = layout_stage(in);
    REQUIRE(L.slots.size() == 1);
    CHECK(L.slots[0].id == "kv");
    CHECK(L.slots[0].box.w == 1920);
    CHECK(L.slots[0].box.h == 1000);
    // Bigger than in the tiled stage; the presenter view of the inside panel likewise.
    in.maximise = "inside";
    in.inside = true;
    in.inside_keys = 8;
    L = layout_stage(in);
    REQUIRE(L.slots.size() == 1);
    CHECK(L.slots[0].id == "inside");
    CHECK(L.slots[0].box.w == 1920);
    in.inside = false;
    in.maximise = "kv";
    L = layout_stage(in);
    in.maximise.clear();
    const StageLayout tiled = layout_stage(in);
    CHECK(L.drawn.kv_grid > tiled.drawn.kv_grid);
    in.focus = {"attention", "kv"};
    in.focus_full = true;
    L = layout_stage(in);
    REQUIRE(L.slots.size() == 3);
    CHECK(L.slots[0].id == "attention");
    CHECK(L.slots[1].id == "kv");
    CHECK(L.slots[2].id == "lesson");
    CHECK(L.slots[1].box.x + L.slots[1].box.w < L.slots[2].box.x);
}

TEST_CASE("of the paths dropped on the window, the model is opened, not its tokenizer", "[gui]") {
    const auto dir = test::temp_dir("dropped");
    std::filesystem::create_directories(dir / "tok-folder");
    const std::string ck = (dir / "m.bin").string(), tok = (dir / "tok512.bin").string();
    CHECK(model_among_dropped({tok, ck}) == ck);
    CHECK(model_among_dropped({ck, tok}) == ck);
    // A Hugging Face folder is the model, whatever its name.
    CHECK(model_among_dropped({tok, (dir / "tok-folder").string()}) ==
          (dir / "tok-folder").string());
    CHECK(model_among_dropped({tok}) == tok);  // opening it says it is not a model
    CHECK(model_among_dropped({}).empty());
}

namespace {

// WCAG 2's relative luminance and contrast ratio.
double luminance(double r, double g, double b) {
    auto lin = [](double c) {
        return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}
double contrast(double la, double lb) {
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}
double lum_of(ImU32 c) {
    const ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
    return luminance(v.x, v.y, v.z);
}
double lum_of(Rgba c) {
    return luminance(c.r / 255.0, c.g / 255.0, c.b / 255.0);
}
double lum_of(const ImVec4& v) {
    return luminance(v.x, v.y, v.z);
}

}  // namespace

TEST_CASE("the light theme passes WCAG AA: text 4.5:1, controls and marks 3:1", "[gui][theme]") {
    ImGui::CreateContext();
    const ThemeColours t = apply_theme(false, 1.0f);
    const ImGuiStyle& st = ImGui::GetStyle();
    const double bg = lum_of(t.clear);
    // Text the panels draw on the window's background.
    const std::pair<const char*, double> texts[] = {
        {"text", lum_of(st.Colors[ImGuiCol_Text])},
        {"disabled text", lum_of(st.Colors[ImGuiCol_TextDisabled])},
        {"muted", lum_of(t.muted_text)},
        {"error", lum_of(t.error_text)},
        {"warning", lum_of(t.warning_text)},
        {"ok", lum_of(t.ok_text)},
        {"series 0", lum_of(t.series[0])},
        {"series 1", lum_of(t.series[1])},
        {"highlight", lum_of(palette_for(false, WeightScale::Sqrt).highlight)},
        {"recomputed", lum_of(palette_for(false, WeightScale::Sqrt).recomputed)},
    };
    for (const auto& [what, l] : texts) {
        INFO(what << ": " << contrast(l, bg) << ":1");
        CHECK(contrast(l, bg) >= 4.5);
    }
    // Controls: outlined (frames, buttons, tabs) at 3:1 against the background, their marks
    // (check, slider grab) at 3:1 against the frame they sit in.
    CHECK(st.FrameBorderSize >= 1.0f);
    CHECK(contrast(lum_of(st.Colors[ImGuiCol_Border]), bg) >= 3.0);
    const double frame = lum_of(st.Colors[ImGuiCol_FrameBg]);
    CHECK(contrast(lum_of(st.Colors[ImGuiCol_CheckMark]), frame) >= 3.0);
    CHECK(contrast(lum_of(st.Colors[ImGuiCol_SliderGrab]), frame) >= 3.0);
    // The provenance marks against the background: read by the query, new, recomputed.
    const HeatmapPalette pal = palette_for(false, WeightScale::Sqrt);
    for (Rgba m : {pal.read, pal.highlight, pal.recomputed}) CHECK(contrast(lum_of(m), bg) >= 3.0);
    ImGui::DestroyContext();
}

TEST_CASE("the Serving view's worker run is the scheduler's, shot by shot",
          "[gui][worker][serving]") {
    const auto file = test::temp_dir("gui-serve") / "prompts.txt";
    std::ofstream(file) << "the cat sat on\nthe cat sat down\nthe cat ran\n\n@2 the dog\n";
    ServeSetup setup;
    setup.prompts_file = file.string();
    setup.config.max_num_seqs = 2;
    setup.config.max_new_tokens = 5;
    EngineWorker w;
    w.open_model(test::tiny_model(), {}, {}, "the cat sat");
    w.serve_open(setup);
    w.serve_step(6);
    w.wait_idle();
    CpuBackend be;
    ServeConfig cfg = setup.config;
    Scheduler direct(test::shared_tiny_model(), be, cfg);
    for (const char* p : {"the cat sat on", "the cat sat down", "the cat ran"})
        direct.submit(test::shared_tiny_model().tokenizer().encode(p));
    direct.submit(test::shared_tiny_model().tokenizer().encode("the dog"), 2);
    auto lock = w.lock();
    const EngineSnapshot& s = w.snapshot();
    INFO(s.error);
    CHECK(s.error.empty());
    REQUIRE(s.serving);
    CHECK(s.serving_model == s.model);
    const ServeTrace& t = *s.serving;
    CHECK(t.prompts.size() == 4);
    CHECK(t.config.block_size == 4);
    REQUIRE(t.shots.size() == 7);  // before the first step, then 6 steps
    CHECK(t.shots[1]->requests[3].state == ServeState::NotArrived);  // "@2": after step 0
    for (std::size_t k = 0; k < t.shots.size(); ++k) {
        if (k > 0) direct.step();
        const ServeShot want = serve_shot(direct);
        const ServeShot& got = *t.shots[k];
        INFO("shot " << k);
        CHECK(got.step.index == want.step.index);
        CHECK(got.used_blocks == want.used_blocks);
        REQUIRE(got.requests.size() == want.requests.size());
        for (std::size_t i = 0; i < got.requests.size(); ++i) {
            CHECK(got.requests[i].state == want.requests[i].state);
            CHECK(got.requests[i].table == want.requests[i].table);
        }
    }
}

TEST_CASE("the Serving view's grid is never smaller at a larger text, its pieces apart",
          "[gui][serving]") {
    auto overlap = [](const Box& a, const Box& b) {
        return std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x) > 0.5f &&
               std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y) > 0.5f;
    };
    for (const auto& [W, H] :
         std::vector<std::pair<float, float>>{{1280, 800}, {1920, 1080}, {3840, 2160}})
        for (int blocks : {8, 32, 200})
            for (int requests : {1, 8, 64}) {
                float cell_1 = 0;
                for (float scale = 1.0f; scale <= 2.0f; scale += 0.125f) {
                    // The margins above, beside and under the content grow with the text: a
                    // toolbar and title (5 lines), the controls (4 lines), padding and scrollbar.
                    const float fh = 16 * scale;
                    ServingInput in;
                    in.fh = fh;
                    in.window = {0, 0, W, H};
                    in.content = {fh * 0.5f, fh * 9, W - fh * 1.5f, H - fh * 9.5f};
                    in.blocks = blocks;
                    in.requests = requests;
                    const ServingLayout L = layout_serving(in);
                    INFO(W << "x" << H << " scale " << scale << " blocks " << blocks << " requests "
                           << requests << ": cell " << L.cell);
                    if (scale == 1.0f) cell_1 = L.cell;
                    CHECK(L.cell + 0.5f >= cell_1);
                    CHECK(L.cell >= 1);
                    CHECK(L.cols * L.rows >= blocks);
                    // The grid within the left half; nothing of the right column beside it
                    // crosses into it; the memory lines under it.
                    CHECK(L.grid.x + L.grid.w <= in.content.x + in.content.w * 0.5f + 0.5f);
                    for (const Box& b : {L.tables, L.timeline, L.batch, L.memory})
                        CHECK_FALSE(overlap(L.grid, b));
                    CHECK_FALSE(overlap(L.tables, L.timeline));
                    CHECK_FALSE(overlap(L.timeline, L.batch));
                    CHECK(L.memory.y >= L.grid.y + L.grid.h);
                    CHECK(L.bottom >= L.batch.y + L.batch.h);
                }
            }
}

TEST_CASE("a plot's scale is chosen from its data: linear for a 128x gap, log past 1000x",
          "[gui][views][present]") {
    // The weights a decode step reads (3.48 MiB) against its K/V rows (27 KiB): 128x, which a log
    // axis squeezes into two gridlines; a linear one shows it.
    const std::vector<double> weights(20, 3.48 * 1024 * 1024), kv = {10e3, 18e3, 27e3};
    CHECK_FALSE(choose_log_y({weights, kv}));
    // Past three decades a linear axis presses the smaller line onto the floor: log.
    const std::vector<double> small = {100, 200};
    CHECK(choose_log_y({weights, small}));
    // NaN, zero and negative values are not data; nothing is linear.
    const std::vector<double> odd = {NAN, 0, -5, 3.0};
    CHECK_FALSE(choose_log_y({odd}));
    CHECK_FALSE(choose_log_y({}));
}

TEST_CASE(
    "the attention matrix's rows come from the steps query_row_at names, in one pass: cached, "
    "uncached keeping every row, payloads dropped by the trace budget",
    "[gui][attention][present]") {
    for (const bool uncached : {false, true})
        for (const std::size_t budget : {std::size_t(0), std::size_t(3000)}) {
            CpuBackend be;
            SessionConfig c;
            if (uncached) {
                c.mode = CacheMode::Uncached;
                c.keep_every_query_row = true;
            }
            if (budget) c.trace_budget = budget;  // the oldest steps keep only their numbers
            Session s(test::shared_tiny_model(), be, c);
            s.set_prompt("a cat in the hat");
            for (int i = 0; i < 8; ++i) s.step();
            const auto steps = s.trace().steps();
            for (int at = 0; at < static_cast<int>(steps.size()); ++at) {
                const auto m = collect_attention_rows(steps, at);
                INFO("uncached " << uncached << ", budget " << budget << ", step " << at);
                for (int q = 0; q < m.n; ++q) {
                    const auto want = kvs::query_row_at(steps, at, q);
                    const bool held = want && steps[want->step].attention.rows > 0;
                    CHECK((m.rows[q].rows != nullptr) == held);
                    if (held && m.rows[q].rows) {
                        CHECK(m.rows[q].step == want->step);
                        CHECK(m.rows[q].r == want->row);
                    }
                }
            }
        }
}

TEST_CASE(
    "a long context's heatmap folds a square of positions into a texel: its largest weight, "
    "else what its cells are",
    "[gui][attention][present]") {
    CpuBackend be;
    Session s(test::shared_tiny_model(), be);
    s.set_prompt("the cat sat in the hat");
    for (int i = 0; i < 6; ++i) s.step();
    const auto m = collect_attention_rows(s.trace().steps(), 5);
    const HeatmapPalette pal = palette_for(true, WeightScale::Sqrt);
    const int n = m.n, stride = 2, width = (n + stride - 1) / stride + 3;
    for (int l = 0; l < m.n_layers; ++l)
        for (int h = 0; h < m.n_heads; ++h)
            for (int q0 = 0; q0 < n; q0 += stride) {
                std::vector<Rgba> px(width);
                attention_block_pixels(m, l, h, q0, q0 + stride, stride, width, pal, px.data());
                for (int c = 0; c < width; ++c) {
                    float best = -1;
                    for (int q = q0; q < std::min(q0 + stride, n); ++q)
                        for (int k = c * stride; k < std::min((c + 1) * stride, n); ++k) {
                            const CellValue v = attention_cell(m, l, h, q, k);
                            if (v.kind == CellKind::Weight) best = std::max(best, v.weight);
                        }
                    INFO("layer " << l << " head " << h << " rows " << q0 << " texel " << c);
                    CHECK(px[c] == (best >= 0 ? weight_colour(best, pal.scale) : pal.mask));
                }
                // One row a texel: the row's own pixels.
                std::vector<Rgba> one(n), row(n);
                attention_block_pixels(m, l, h, q0, q0 + 1, 1, n, pal, one.data());
                for (int k = 0; k < n; ++k) {
                    const CellValue v = attention_cell(m, l, h, q0, k);
                    row[k] =
                        v.kind == CellKind::Weight ? weight_colour(v.weight, pal.scale) : pal.mask;
                }
                CHECK(one == row);
            }
}
