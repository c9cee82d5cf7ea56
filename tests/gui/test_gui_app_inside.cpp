// Inside attention in the window under Xvfb: the formula with the toy's numbers, the numbers
// explain_attention gives, the rows an uncached step recomputed, --explain and --op checked, a room
// reading the row at text 2, a lesson's row closing when the lesson moves on.
#include <catch2/catch.hpp>

#include "tests/gui/gui_app_helpers.h"

using namespace kvs::gui_app_test;

TEST_CASE("inside attention on the toy writes the formula with the tutorial's numbers",
          "[gui][screenshot][explain][toy]") {
    // Head "even" at "so" (position 4): scores −∞ / 0, weights 0.5 on "weather" and "so", 12.5.
    const Shot s = screenshot({"--model", "toy", "--prompt", "Today weather is so", "--prefill",
                               "--explain", "0,0,4", "--theme", "light"},
                              "explain-toy");
    const json& x = s.layout.at("explain");
    REQUIRE(x.at("open") == true);
    CHECK(x.at("why") == "");
    CHECK(x.at("step") == 0);
    CHECK(x.at("q_pos") == 3);
    CHECK(x.at("position") == 4);
    CHECK(x.at("n_keys") == 4);
    // One numbering: the header, the diagram's key labels and the option all say position 4.
    CHECK(line_has(s.layout, "inside_attention", "the query at position 4 \"so\""));
    CHECK(x.at("drawn").at(0).at("key_labels").back() == "4 so");
    CHECK(x.at("phase") == "prefill");
    CHECK(s.layout.at("panels").contains("inside_attention"));
    CHECK(has_text(s.layout, "inside_attention", "softmax(q·Kᵀ/√d_k + mask)·V"));
    CHECK(line_has(s.layout, "inside_attention", "= softmax([−∞, 0, −∞, 0] × 1 + mask)·V"));
    CHECK(line_has(s.layout, "inside_attention", "= [0, 0.5, 0, 0.5]·V"));
    CHECK(line_has(s.layout, "inside_attention", "= [12.5]"));
    CHECK(has_text(s.layout, "inside_attention", "[4, 1]"));  // K and V: [T, d_k], [T, d_v]
    CHECK(column_texts(s.layout, "q·k_j") == std::vector<std::string>{"−∞", "0", "−∞", "0"});
    CHECK(column_texts(s.layout, "softmax w") == std::vector<std::string>{"0", "0.5", "0", "0.5"});
    CHECK(column_texts(s.layout, "V") == std::vector<std::string>{"10", "20", "1", "5"});
    CHECK(column_texts(s.layout, "Σ_j w_j·v_j") == std::vector<std::string>{"12.5"});

    // Head "even" at the first token: every key masked, output none.
    const Shot n = screenshot(
        {"--model", "toy", "--prompt", "Today weather is so", "--prefill", "--explain", "0,0,1"},
        "explain-toy-none");
    CHECK(line_has(n.layout, "inside_attention", "= none"));
}

TEST_CASE("inside attention draws the numbers explain_attention gives, prefill and decode",
          "[gui][screenshot][explain]") {
    // The same prompt in a session of our own: the prefill's rows do not depend on sampling.
    kvs::CpuBackend be;
    auto model = kvs::open_model(tiny_model());
    kvs::Session sess(*model, be);
    sess.set_prompt("the cat");
    sess.step();
    std::string why;
    const auto e = kvs::explain_attention(sess.trace(), model->config(), 0, 1, 2, 3, &why);
    INFO(why);
    REQUIRE(e);
    // A short prompt and smaller text, so that every key's row has room for its numbers.
    const std::vector<std::string> base = {"--model",      tiny_model(), "--prompt", "the cat",
                                           "--backend",    "cpu",        "--layer",  "1",
                                           "--font-scale", "0.75"};
    auto with = [&](std::vector<std::string> more) {
        more.insert(more.begin(), base.begin(), base.end());
        return more;
    };
    const Shot s = screenshot(with({"--prefill", "--explain", "1,2,4"}), "explain-pre");
    const json& x = s.layout.at("explain");
    CHECK(x.at("step") == 0);
    CHECK(x.at("row") == 3);
    CHECK(x.at("position") == 4);
    CHECK(x.at("head_dim") == e->head_dim);
    const int T = e->n_keys, dk = e->head_dim;
    char shape[160];
    std::snprintf(shape, sizeof shape,
                  "Q [%d, %d] · Kᵀ [%d, %d] → scores [%d, %d]; shown: the query at position 4",
                  e->query_rows_computed, dk, dk, T, e->query_rows_computed, T);
    CHECK(has_text(s.layout, "inside_attention", shape));
    const auto w = column_texts(s.layout, "softmax w");
    const auto raw = column_texts(s.layout, "q·k_j");
    REQUIRE(int(w.size()) == T);
    REQUIRE(int(raw.size()) == T);
    for (int j = 0; j < T; ++j) {
        if (e->masked[j]) continue;
        CHECK(std::stod(w[j]) == Approx(e->weights[j]).margin(1e-4).epsilon(1e-3));
        CHECK(std::stod(raw[j]) == Approx(e->raw[j]).margin(1e-4).epsilon(1e-3));
    }

    // A decode row: one query row against every cached key, 1/√d_k written with d_k's value.
    const Shot d = screenshot(with({"--decode", "2", "--explain", "1,2,last"}), "explain-dec");
    const json& y = d.layout.at("explain");
    CHECK(y.at("phase") == "decode");
    CHECK(y.at("step") == 2);
    const int Td = y.at("n_keys").get<int>();
    std::snprintf(shape, sizeof shape, "q [1, %d] · Kᵀ [%d, %d] → scores [1, %d]", dk, dk, Td, Td);
    CHECK(has_text(d.layout, "inside_attention", shape));
    std::snprintf(shape, sizeof shape, "×1/√d_k = 1/√%d = ", dk);
    bool scale_line = false;
    for (const auto& t : panel_texts(d.layout, "inside_attention"))
        scale_line |= t.at("text").get<std::string>().rfind(shape, 0) == 0;
    CHECK(scale_line);
    // The weights drawn sum to 1.
    double sum = 0;
    for (const auto& v : column_texts(d.layout, "softmax w")) sum += std::stod(v);
    CHECK(sum == Approx(1.0).margin(2e-3));
    // The K rows: the cached ones and the one this step wrote (its last).
    const auto labels = column_texts(d.layout, "softmax w");
    CHECK(int(labels.size()) == Td);
}

TEST_CASE("compare mode outlines every row the uncached step recomputed and says Q was not needed",
          "[gui][screenshot][explain]") {
    const Shot s = screenshot(tiny_with({"--decode", "2", "--cache", "compare"}), "recomputed");
    const json& a = main_heatmap(s.layout, 0);
    const json& b = main_heatmap(s.layout, 1);
    const int T = b.at("n").get<int>();
    CHECK(a.at("recomputed_rows").at(0) == a.at("recomputed_rows").at(1));  // with the cache: none
    CHECK(b.at("recomputed_rows").at(0) == 0);
    CHECK(b.at("recomputed_rows").at(1) == T);
    const auto rc = rgb(s.layout.at("colours").at("recomputed"));
    const json& r = b.at("rect");
    for (int q = 0; q < T - 1; ++q) {
        const double mid = r.at("y").get<double>() + (q + 0.5) * r.at("h").get<double>() / T;
        bool outlined = false;
        for (int dx = 0; dx <= 3 && !outlined; ++dx)
            outlined = s.image.at(r.at("x").get<double>() - dx, mid) == rc;
        INFO("row " << q);
        CHECK(outlined);
    }
    // The step's line, from the measured fields (wrapped: its pieces joined).
    std::string all;
    for (const auto& t : panel_texts(s.layout, "attention"))
        all += t.at("text").get<std::string>() + " ";
    INFO(all);
    // Layer 1, the tiny model's last: one row for the output, the others thrown away.
    CHECK(all.find("layer 1: computed " + std::to_string(T) + " query rows: 1 for this token's " +
                   "output, " + std::to_string(T - 1) + " thrown away") != std::string::npos);
    CHECK(all.find("recomputed " + std::to_string(T - 1) + " K/V rows") != std::string::npos);
    CHECK(all.find("max |Δ|") != std::string::npos);
}

TEST_CASE("the --explain and --op options are checked like every option",
          "[gui][errors][explain]") {
    for (const char* bad : {"1,2", "a,b,c", "1,2,3,4", "-1,0,0"}) {
        const Run r = run_app({"--explain", bad, "--screenshot", "x.png"}, false);
        INFO(bad << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("--explain") != std::string::npos);
    }
}

TEST_CASE(
    "a room reads the row: at 1920x1080 with text 2 the heatmap keeps its text-1 size and "
    "every number of the row is drawn at body size, at 1280x800 every key is labelled",
    "[gui][screenshot][explain][stage]") {
    // The default model after the prefill and 3 decode steps, layer 1, head 0, the newest row.
    const std::vector<std::string> base = {"--backend", "cpu", "--model",   "default",
                                           "--decode",  "3",   "--explain", "1,0,last"};
    auto run = [&](const std::string& size, const std::string& scale, const std::string& tag) {
        const fs::path dir = kvs::test::temp_dir("gui-room-" + tag);
        std::vector<std::string> args = base;
        args.insert(args.end(), {"--size", size, "--font-scale", scale, "--layout-json",
                                 (dir / "l.json").string()});
        const Run r = run_app(args);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        return json::parse(slurp(dir / "l.json"));
    };
    // The numbers the engine gives for that row.
    const auto cli = kvs::test::run_cli({"explain", "--model", "default", "--backend", "cpu",
                                         "--prompt", "Once upon a time", "--step", "3", "--layer",
                                         "1", "--head", "0", "--json"});
    REQUIRE(cli.exit_code == 0);
    const json e = json::parse(cli.out);
    const int T = static_cast<int>(e.at("keys").size());

    const json one = run("1920x1080", "1", "1");
    const json two = run("1920x1080", "2", "2");
    const double w1 = main_heat_width(one), w2 = main_heat_width(two);
    INFO("heatmap at text 1: " << w1 << " px, at text 2: " << w2 << " px");
    CHECK(w1 > 100);
    CHECK(w2 + 0.5 >= w1);
    for (const auto& [col, field] : std::vector<std::pair<std::string, std::string>>{
             {"q·k_j", "raw"}, {"×1/√16", "scaled"}, {"softmax w", "weight"}}) {
        const auto drawn = column_texts(two, col);
        INFO(col);
        REQUIRE(static_cast<int>(drawn.size()) == T);
        for (int j = 0; j < T; ++j)
            CHECK(std::stod(drawn[j]) ==
                  Approx(e.at("keys").at(j).at(field).get<double>()).margin(1e-4).epsilon(1e-3));
    }
    // Glyphs at least as tall as body text at that size (digits of the 32 px font: 21-22 px).
    const auto nums = inside_numbers(two);
    REQUIRE(static_cast<int>(nums.size()) >= 3 * T);
    for (const auto& t : nums) CHECK(t.at("rect").at("h").get<double>() >= 20);

    // A laptop's screen at text 1: each key labelled with its position (from 1, as the header
    // and every view number them) and its token, every weight drawn.
    const json lap = run("1280x800", "1", "lap");
    CHECK(static_cast<int>(column_texts(lap, "softmax w").size()) == T);
    for (int j = 0; j < T; ++j) {
        const std::string piece = e.at("keys").at(j).at("piece");
        const int position = e.at("keys").at(j).at("position");
        bool labelled = false;
        for (const auto& t : panel_texts(lap, "inside_attention"))
            labelled = labelled || t.at("text").get<std::string>().rfind(
                                       std::to_string(position) + " ", 0) == 0;
        INFO("key at position " << position << " \"" << piece << "\"");
        CHECK(labelled);
    }
}

TEST_CASE("a lesson's Inside attention row closes when the lesson moves on without one",
          "[gui][screenshot][lessons][explain]") {
    // Lesson 4: step 1 opens a row (@explain), step 2 has none, step 3 opens another.
    const auto open_at = [](const char* step) {
        const fs::path dir = kvs::test::temp_dir(std::string("gui-stale-") + step);
        const Run r = run_app({"--backend", "cpu", "--lesson", "4", "--lesson-step", step,
                               "--layout-json", (dir / "l.json").string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        return json::parse(slurp(dir / "l.json")).at("explain").at("open").get<bool>();
    };
    CHECK(open_at("1"));
    CHECK_FALSE(open_at("2"));
    CHECK(open_at("3"));
}
