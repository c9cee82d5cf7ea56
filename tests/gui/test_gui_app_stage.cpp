// The window's stage under Xvfb, checked against its screenshot and --layout-json: the attention
// heatmap's triangle and the row a decode step adds, zoom, the KV grid, compare mode, the toy's
// table and next-token panel, a recorded run, one query numbered alike, the bytes plot.
#include <catch2/catch.hpp>

#include "tests/gui/gui_app_helpers.h"

using namespace kvs::gui_app_test;

TEST_CASE("after the prefill the attention heatmap is a lower triangle", "[gui][screenshot]") {
    const Shot s = screenshot(tiny_with({"--prefill"}), "prefill");
    const json& hm = main_heatmap(s.layout);
    const int n = hm.at("n").get<int>();
    REQUIRE(n >= 4);
    CHECK(hm.at("layer") == 1);
    CHECK(hm.at("head") == 2);
    CHECK(hm.at("new_rows").at(0) == 0);  // the whole block is new at the prefill
    CHECK(hm.at("new_rows").at(1) == n);
    CHECK(s.layout.at("step") == 0);
    const auto mask = rgb(s.layout.at("colours").at("mask"));
    int masked = 0, weights = 0;
    for (int q = 0; q < n; ++q)
        for (int k = 0; k < n; ++k) {
            const auto [x, y] = cell_centre(hm.at("rect"), n, q, k);
            const auto px = s.image.at(x, y);
            if (k > q) {
                CHECK(px == mask);
                ++masked;
            } else {
                CHECK(px != mask);
                ++weights;
            }
        }
    CHECK(masked == n * (n - 1) / 2);
    CHECK(weights == n * (n + 1) / 2);
    // Every small multiple is drawn, one per (layer, head) of the tiny model (2 x 4).
    int small = 0;
    for (const auto& h : s.layout.at("heatmaps")) small += h.at("main").get<bool>() ? 0 : 1;
    CHECK(small == 8);
}

TEST_CASE("one decode step adds exactly one row and outlines it", "[gui][screenshot]") {
    const Shot pre = screenshot(tiny_with({"--prefill"}), "pre");
    const Shot dec = screenshot(tiny_with({"--decode", "1"}), "dec");
    const json& h0 = main_heatmap(pre.layout);
    const json& h1 = main_heatmap(dec.layout);
    const int n = h0.at("n").get<int>();
    REQUIRE(h1.at("n").get<int>() == n + 1);
    CHECK(h1.at("new_rows").at(0) == n);
    CHECK(h1.at("new_rows").at(1) == n + 1);
    CHECK(dec.layout.at("step") == 1);
    const auto mask = rgb(dec.layout.at("colours").at("mask"));
    // The old rows keep their colours; the new row has n + 1 weights and no masked cell.
    for (int q = 0; q < n; ++q)
        for (int k = 0; k <= n; ++k) {
            const auto [x1, y1] = cell_centre(h1.at("rect"), n + 1, q, k);
            if (k > q) {
                CHECK(dec.image.at(x1, y1) == mask);
                continue;
            }
            const auto [x0, y0] = cell_centre(h0.at("rect"), n, q, k);
            CHECK(dec.image.at(x1, y1) == pre.image.at(x0, y0));
        }
    for (int k = 0; k <= n; ++k) {
        const auto [x, y] = cell_centre(h1.at("rect"), n + 1, n, k);
        CHECK(dec.image.at(x, y) != mask);
    }
    // The outline: the highlight colour just outside the new row's left edge.
    const auto hl = rgb(dec.layout.at("colours").at("highlight"));
    const json& r = h1.at("rect");
    const double row_mid = r.at("y").get<double>() + (n + 0.5) * r.at("h").get<double>() / (n + 1);
    bool outlined = false;
    for (int dx = 0; dx <= 3 && !outlined; ++dx)
        outlined = dec.image.at(r.at("x").get<double>() - dx, row_mid) == hl;
    CHECK(outlined);
}

TEST_CASE("zoomed in, the large heatmap shows the newest tokens", "[gui][screenshot]") {
    const Shot s = screenshot(tiny_with({"--decode", "6", "--zoom", "2"}), "zoom");
    const json& hm = main_heatmap(s.layout);
    const int n = hm.at("n").get<int>(), first = hm.at("first").get<int>();
    REQUIRE(n >= 10);
    CHECK(first == n - std::max(8, (n + 1) / 2));  // ceil(n / 2) rows, at least 8
    const int shown = n - first;
    const auto mask = rgb(s.layout.at("colours").at("mask"));
    for (int i = 0; i < shown; ++i)
        for (int j = 0; j < shown; ++j) {
            const auto [x, y] = cell_centre(hm.at("rect"), shown, i, j);
            if (j > i)
                CHECK(s.image.at(x, y) == mask);
            else
                CHECK(s.image.at(x, y) != mask);
        }
}

TEST_CASE("the KV grid has one column per token in the cache", "[gui][screenshot]") {
    const Shot s = screenshot(tiny_with({"--decode", "3"}), "kv");
    REQUIRE(s.layout.at("kv_grids").size() == 1);
    const json& g = s.layout.at("kv_grids").at(0);
    const int T = main_heatmap(s.layout).at("n").get<int>();
    CHECK(g.at("columns").get<int>() == T);
    CHECK(g.at("rows").get<int>() == 2 * 8);  // K and V, kv_dim = 2 kv heads x head size 4
    CHECK(g.at("written").at(0) == T - 1);    // a cached step writes one column
    CHECK(g.at("written").at(1) == T);
    const json& r = g.at("rect");
    const double cw = g.at("cell").at(0).get<double>();
    CHECK(r.at("w").get<double>() == Approx(T * cw).margin(0.01));
    const auto bg = rgb(s.layout.at("colours").at("background"));
    const double y =
        r.at("y").get<double>() + r.at("h").get<double>() * 0.25;  // inside the K block
    // Every column is drawn (a value colour, not the background)...
    for (int p = 0; p < T; ++p)
        CHECK(s.image.at(r.at("x").get<double>() + (p + 0.5) * cw, y) != bg);
    // ...and nothing past the last one: the grid is exactly T columns wide.
    CHECK(s.image.at(r.at("x").get<double>() + T * cw + cw * 2.5, y) == bg);
}

TEST_CASE("a wide model's KV grid stays inside its box, above the line under it",
          "[gui][screenshot]") {
    // kv_dim 288: 576 K and V rows, more than the panel has pixels at 1280x800. (Rows kept at
    // least half a pixel tall would run the grid over the hint below it.)
    const fs::path dir = kvs::test::temp_dir("gui-wide-model");
    kvs::ModelConfig c = kvs::test::tiny_config();
    c.dim = 288, c.hidden_dim = 64, c.n_heads = 6, c.n_kv_heads = 6, c.n_layers = 1;
    kvs::test::write_file(dir / "wide.bin", kvs::test::synthetic_checkpoint(c));
    kvs::test::write_file(dir / "wide.tok.bin", kvs::test::synthetic_tokenizer({}, c.vocab_size));
    const Shot s = screenshot({"--model", (dir / "wide.bin").string(), "--prompt", "abc",
                               "--backend", "cpu", "--decode", "2"},
                              "wide");
    REQUIRE(s.layout.at("kv_grids").size() == 1);
    const json& g = s.layout.at("kv_grids").at(0);
    CHECK(g.at("rows").get<int>() == 2 * 288);
    const json& r = g.at("rect");
    const double bottom = r.at("y").get<double>() + r.at("h").get<double>();
    const json& panel = s.layout.at("panels").at("kv_cache");
    CHECK(bottom <= panel.at("y").get<double>() + panel.at("h").get<double>());
    // No text of the panel is drawn over the grid.
    for (const auto& t : s.layout.at("texts")) {
        if (t.at("panel") != "kv" || t.at("overlay").get<bool>()) continue;
        const json& tr = t.at("rect");
        const double ty0 = tr.at("y").get<double>(), ty1 = ty0 + tr.at("h").get<double>();
        const bool beside =
            tr.at("x").get<double>() >= r.at("x").get<double>() + r.at("w").get<double>() ||
            tr.at("x").get<double>() + tr.at("w").get<double>() <= r.at("x").get<double>();
        INFO(t.at("text").get<std::string>());
        CHECK((beside || ty1 <= r.at("y").get<double>() + 2 || ty0 >= bottom - 2));
    }
}

TEST_CASE("compare mode draws both sessions and without the cache every column is rewritten",
          "[gui][screenshot]") {
    const Shot s = screenshot(tiny_with({"--decode", "2", "--cache", "compare"}), "cmp");
    const json& a = main_heatmap(s.layout, 0);
    const json& b = main_heatmap(s.layout, 1);
    CHECK(a.at("session") == "with KV cache");
    CHECK(b.at("session") == "without KV cache");
    CHECK(a.at("n") == b.at("n"));
    REQUIRE(s.layout.at("kv_grids").size() == 2);
    const int T = a.at("n").get<int>();
    CHECK(s.layout.at("kv_grids").at(0).at("written").at(0) == T - 1);
    CHECK(s.layout.at("kv_grids").at(1).at("written").at(0) == 0);
    CHECK(s.layout.at("kv_grids").at(1).at("written").at(1) == T);
    // The same weights drawn the same way in both.
    const auto mask = rgb(s.layout.at("colours").at("mask"));
    for (int q = 0; q < T; ++q) {
        const auto [xa, ya] = cell_centre(a.at("rect"), T, q, 0);
        const auto [xb, yb] = cell_centre(b.at("rect"), T, q, 0);
        CHECK(s.image.at(xa, ya) == s.image.at(xb, yb));
        CHECK(s.image.at(xa, ya) != mask);
    }
}

TEST_CASE("the toy example shows its table panel and draws none as an empty row",
          "[gui][screenshot][toy]") {
    const Shot s =
        screenshot({"--model", "toy", "--prompt", "Today weather is so", "--prefill", "--layer",
                    "0", "--head", "0", "--weight-scale", "linear", "--theme", "light"},
                   "toy");
    CHECK(s.layout.at("model") == "toy");
    CHECK(s.layout.at("theme") == "light");
    CHECK(s.layout.at("panels").contains("toy_table"));
    const json& hm = main_heatmap(s.layout);
    REQUIRE(hm.at("n") == 4);
    const auto empty = rgb(s.layout.at("colours").at("empty_row"));
    const auto [x, y] = cell_centre(hm.at("rect"), 4, 0, 0);
    CHECK(s.image.at(x, y) == empty);  // head "even" at the first token: none
    const auto [x2, y2] = cell_centre(hm.at("rect"), 4, 1, 1);
    CHECK(s.image.at(x2, y2) != empty);
}

TEST_CASE("the toy's Next-token panel shows all ten tokens with logits and probabilities",
          "[gui][screenshot][toy]") {
    // The same step in a session of our own: its ten recorded next tokens.
    kvs::CpuBackend be;
    auto model = kvs::open_model("toy");
    kvs::Session sess(*model, be);
    sess.set_prompt("Today weather is so");
    sess.step();
    sess.step();
    const auto& top = sess.trace().back().top;
    REQUIRE(top.size() == 10);
    const std::vector<std::string> base = {"--model",  "toy", "--prompt",  "Today weather is so",
                                           "--decode", "1",   "--backend", "cpu"};
    // At 1280x800 and text scale 1: alone, in compare mode, and beside the lesson column (whose
    // lesson 1 at step 2 leaves the toy prefilled: its own ten).
    const std::vector<std::vector<std::string>> extras = {
        {}, {"--cache", "compare"}, {"--lesson", "1", "--lesson-step", "2"}};
    for (std::size_t k = 0; k < extras.size(); ++k) {
        const auto& extra = extras[k];
        std::vector<std::string> args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        const bool lesson = !extra.empty() && extra[0] == "--lesson";
        const Shot s = screenshot(args, "next-" + std::to_string(k));
        INFO((extra.empty() ? std::string("alone") : extra[0]));
        CHECK(s.layout.at("next_tokens_shown") == 10);
        if (lesson) continue;  // the lesson's step shows its prefill, not this decode step
        for (const auto& t : top) {
            char lg[24], pct[24];
            std::snprintf(lg, sizeof lg, "%.2f", t.logit);
            std::snprintf(pct, sizeof pct, "%.1f%%", 100.0f * t.prob);
            INFO(model->tokenizer().piece(t.id) << " " << lg << " " << pct);
            CHECK(line_has(s.layout, "next", lg));
            CHECK(line_has(s.layout, "next", pct));
        }
    }
}

TEST_CASE("a recorded run replays with no model file: its attention drawn, where it was recorded",
          "[gui][screenshot][replay]") {
    // Recorded by kvscope-cli from a model that is then deleted.
    const fs::path dir = kvs::test::temp_dir("gui-replay-shot");
    const std::string model = kvs::test::write_tiny_model(dir);
    const std::string trace = (dir / "run.json").string();
    const auto rec = kvs::test::run_cli(
        {"compare", "--model", model, "--prompt", "the cat sat", "-n", "4", "--trace-json", trace});
    REQUIRE(rec.exit_code == 0);
    fs::remove(model);
    fs::remove(dir / "tiny.tok.bin");
    const Shot s = screenshot({"--replay", trace, "--layer", "1", "--head", "2"}, "replay");
    CHECK(s.layout.at("model") == "tiny");
    // Both sessions' heatmaps: every cell on or below the diagonal is a weight, not the mask.
    const auto mask = rgb(s.layout.at("colours").at("mask"));
    for (int i = 0; i < 2; ++i) {
        const json& hm = main_heatmap(s.layout, i);
        const int n = hm.at("n").get<int>();
        CHECK(n >= 8);  // the prompt and the steps after it
        for (int q = 0; q < n; ++q) {
            const auto [x, y] = cell_centre(hm.at("rect"), n, q, 0);
            CHECK(s.image.at(x, y) != mask);
            if (q + 1 < n) {
                const auto [mx, my] = cell_centre(hm.at("rect"), n, q, q + 1);
                CHECK(s.image.at(mx, my) == mask);
            }
        }
    }
    bool said_where = false;
    for (const auto& t : s.layout.at("texts"))
        said_where = said_where || t.at("text").get<std::string>().find(
                                       "recorded run of tiny on") != std::string::npos;
    CHECK(said_where);
}

TEST_CASE("one query numbered alike: the window, the CLI, the JSON and lesson 3",
          "[gui][indexing]") {
    // The toy's first decode step feeds "nice", the token at position 5: every front end names
    // its query row by that position (core/util/numbering.h), and --explain / --row take it.
    const auto text = kvs::test::run_cli({"explain", "--model", "toy", "--step", "1"});
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("the query at position 5 \"nice\"") != std::string::npos);
    const auto by_row =
        kvs::test::run_cli({"explain", "--model", "toy", "--step", "1", "--row", "5"});
    CHECK(by_row.out == text.out);
    const auto js = kvs::test::run_cli({"explain", "--model", "toy", "--step", "1", "--json"});
    REQUIRE(js.exit_code == 0);
    const json j = json::parse(js.out);
    CHECK(j.at("row") == 0);  // its index among the step's kept rows, which `indexing` names
    CHECK(j.at("position") == 5);
    CHECK(j.at("indexing").at("positions_from") == 1);
    CHECK(j.at("keys").at(4).at("position") == 5);
    CHECK(j.at("keys").at(4).at("piece") == "nice");
    const auto lesson = kvs::test::run_cli({"lesson", "3", "--backend", "cpu"});
    CHECK(lesson.out.find("the query at position 5 'nice'") != std::string::npos);
    const std::string prose = slurp(kvs::find_lesson("3", "en"));
    CHECK(prose.find("\"nice\", the token at\nposition 5") != std::string::npos);
    const Shot w = screenshot(
        {"--model", "toy", "--decode", "1", "--explain", "0,0,5", "--backend", "cpu"}, "numbering");
    CHECK(line_has(w.layout, "inside_attention", "the query at position 5 \"nice\""));
    CHECK(w.layout.at("explain").at("drawn").at(0).at("key_labels").back() == "5 nice");
}

TEST_CASE("the bytes plot draws each session's K/V traffic: compare, one session, bidirectional",
          "[gui][screenshot][stage]") {
    // Compare mode: the cached session's K/V bytes (T read, 1 written) under the uncached one's
    // (T read, T written), each its own line, and the weights read.
    const json cmp = layout_of(tiny_with({"--cache", "compare", "--decode", "4"}), "1280x800", "1",
                               "bytes-compare");
    const json& b = plot_named(cmp, "bytes");
    REQUIRE(b["series"].size() == 3);
    std::vector<std::vector<double>> ys;
    for (const auto& [label, y] : b["series"].items()) ys.push_back(y.get<std::vector<double>>());
    // (Series by label: "K/V read and written, with KV cache" sorts before "..., without ...".)
    const auto& cached = ys[0];
    const auto& uncached = ys[1];
    REQUIRE(cached.size() == uncached.size());
    REQUIRE(cached.size() >= 5);
    CHECK(cached[0] == uncached[0]);               // the same prefill
    CHECK(uncached.back() > cached.back() * 1.5);  // T + T rows against T + 1
    // One session: the mode that did not run, counted, beside it.
    const json one = layout_of(tiny_with({"--decode", "4"}), "1280x800", "1", "bytes-one");
    CHECK(plot_named(one, "bytes")["series"].size() == 3);
    // Bidirectional: both sessions run uncached and move the same bytes: both lines are there.
    const json bi = layout_of(tiny_with({"--cache", "bidirectional", "--decode", "2"}), "1280x800",
                              "1", "bytes-bidirectional");
    CHECK(plot_named(bi, "bytes")["series"].size() == 3);
}
