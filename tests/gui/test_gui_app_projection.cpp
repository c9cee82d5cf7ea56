// Inside attention's first stages in the window under Xvfb: the numbers each projection stage
// draws are explain_projection's, as `kvscope-cli explain --show projection --json` prints them;
// and Inside attention shown alone fills the window (numbers at least 32 px at 1920x1080 text 1,
// never smaller at a larger text, every weight of the decode row inside a 1280x800 window at
// text 2, as a tab of the stage and alone).
#include <catch2/catch.hpp>

#include "lessonlib/attention_row_words.h"
#include "tests/gui/gui_app_helpers.h"

using namespace kvs::gui_app_test;

namespace {

const std::vector<std::string> kFrance = {
    "--backend", "cpu", "--model",   "default", "--prompt", "The capital of France is",
    "--decode",  "3",   "--explain", "1,0,last"};

bool same_float(const json& a, const json& b) {
    return static_cast<float>(a.get<double>()) == static_cast<float>(b.get<double>());
}

void check_same(const json& drawn, const json& cli, const char* what) {
    INFO(what);
    REQUIRE(drawn.size() == cli.size());
    REQUIRE(!cli.empty());
    for (std::size_t i = 0; i < cli.size(); ++i) {
        INFO("element " << i);
        CHECK(same_float(drawn[i], cli[i]));
    }
}

// Every value of `v` written (4 significant digits, as the panel prints) in some text the panel
// drew: in a cell, or on the stage's numbers line.
void check_written(const json& layout, const json& v, const char* what) {
    std::string all;
    for (const auto& t : layout.at("texts"))
        if (t.at("panel") == "inside_attention")
            all.append(" ").append(t.at("text").get<std::string>()).append(" ");
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string n = kvs::attention_number(static_cast<float>(v[i].get<double>()));
        INFO(what << "[" << i << "] = " << n);
        CHECK(all.find(n) != std::string::npos);
    }
}

}  // namespace

TEST_CASE(
    "Inside attention's projection stages draw explain_projection's numbers, as kvscope-cli "
    "explain --show projection --json prints them",
    "[gui][screenshot][explain][projection]") {
    const fs::path dir = kvs::test::temp_dir("gui-projection");
    std::vector<std::string> args = kFrance;
    args.insert(args.end(), {"--maximise", "inside", "--size", "1920x1080", "--views",
                             "stage=1;stage=2;stage=3;stage=4;stage=5;stage=6;stage=7",
                             "--layout-json", (dir / "l.json").string()});
    const Run r = run_app(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<json> stage(8);
    for (int v = 1; v <= 7; ++v)
        stage[v] = json::parse(slurp(dir / ("l-" + std::to_string(v) + ".json")));
    const int step = stage[1].at("explain").at("step");
    const auto cli =
        kvs::test::run_cli({"explain", "--model", "default", "--backend", "cpu", "--prompt",
                            "The capital of France is", "--step", std::to_string(step), "--layer",
                            "1", "--head", "0", "--show", "projection", "--json"});
    REQUIRE(cli.exit_code == 0);
    const json e = json::parse(cli.out);
    const json& p = e.at("projection");
    for (int v = 1; v <= 7; ++v) {
        const json& pr = stage[v].at("explain").at("projection");
        INFO("stage " << v);
        CHECK(stage[v].at("explain").at("stage") == v - 1);
        CHECK(pr.at("stage") == v - 1);
        CHECK(pr.at("why") == "");
        for (const auto& problem : text_problems(stage[v])) FAIL_CHECK(problem);
    }
    const json& x = stage[1].at("explain").at("projection");
    check_same(x.at("x"), p.at("x"), "x");
    CHECK(same_float(x.at("x_rms"), p.at("x_rms")));
    check_written(stage[1], json::array({p.at("x_rms")}), "rms");
    check_same(stage[2].at("explain").at("projection").at("x_norm"), p.at("x_norm"), "x_norm");
    const char* names[] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
        const json& pr = stage[3 + i].at("explain").at("projection");
        check_same(pr.at(names[i]), p.at(names[i]), names[i]);
        check_written(stage[3 + i], p.at(names[i]), names[i]);
        // The head's weight rows, as explain's strips: d_k rows from the head's first.
        const json& w = e.at("weights").at(i);
        CHECK(w.at("matrix") == std::string("W_") + names[i]);
        CHECK(pr.at("weights_why") == "");
        CHECK(pr.at("strip_rows") == p.at("head_dim"));
        CHECK(pr.at("strip_first_row") == w.at("first_row"));
    }
    const json& rope = stage[6].at("explain").at("projection");
    for (const char* f : {"q", "k", "q_rope", "k_rope", "q_angle"})
        check_same(rope.at(f), p.at(f), f);
    for (const char* f : {"q_len", "q_rope_len", "k_len", "k_rope_len"})
        CHECK(same_float(rope.at(f), p.at(f)));
    check_written(stage[6], p.at("q_rope"), "q_rope");
    check_written(stage[6], p.at("q_angle"), "q_angle");
    check_written(stage[6], json::array({p.at("q_len"), p.at("k_len")}), "lengths");
    const json& cache = stage[7].at("explain").at("projection");
    check_same(cache.at("k_rope"), p.at("k_rope"), "K row");
    check_same(cache.at("v"), p.at("v"), "V row");
    CHECK(cache.at("cache_row").get<int>() + 1 == p.at("cache").at("row_position").get<int>());
    for (const char* f : {"keys_read", "read_cached", "read_new", "read_recomputed"})
        CHECK(cache.at(f) == p.at("cache").at(f));

    // The toy keeps no projections: the stage says why, in one line, and draws no number.
    const fs::path toy = kvs::test::temp_dir("gui-projection-toy");
    const Run t =
        run_app({"--backend", "cpu", "--model", "toy", "--decode", "1", "--explain", "0,0,last",
                 "--explain-stage", "3", "--layout-json", (toy / "l.json").string()});
    INFO(t.err);
    REQUIRE(t.exit_code == 0);
    const json tl = json::parse(slurp(toy / "l.json"));
    CHECK(tl.at("explain").at("projection").at("why") != "");
    CHECK(tl.at("explain").at("projection").at("q").empty());
}

TEST_CASE(
    "Inside attention alone fills the window: numbers of 32 px at 1920x1080 text 1, never "
    "smaller at text 2, every weight of the decode row inside a 1280x800 window at text 2",
    "[gui][screenshot][explain][stage]") {
    auto run = [](const std::string& size, const std::string& scale, bool alone) {
        std::vector<std::string> a = kFrance;
        if (alone) a.insert(a.end(), {"--maximise", "inside"});
        return layout_of(a, size, scale, "fill-" + size + "-" + scale + (alone ? "-alone" : ""));
    };
    // Key 8 at a projector's size and text 1: the row's numbers at least 32 px tall.
    const json one = run("1920x1080", "1", true);
    const auto nums = inside_numbers(one);
    const int T = one.at("explain").at("n_keys");
    REQUIRE(static_cast<int>(nums.size()) >= 3 * T);
    for (const auto& t : nums) {
        INFO(t.at("text").get<std::string>());
        CHECK(t.at("rect").at("h").get<double>() >= 32);
    }
    // At text 2 the numbers are drawn at no smaller a size, at both window sizes.
    for (const std::string size : {"1920x1080", "1280x800"}) {
        const double px1 = run(size, "1", true).at("explain").at("drawn").at(0).at("number_px");
        const double px2 = run(size, "2", true).at("explain").at("drawn").at(0).at("number_px");
        INFO(size << ": numbers at " << px1 << " px at text 1, " << px2 << " px at text 2");
        CHECK(px1 > 16);
        CHECK(px2 + 0.5 >= px1);
    }
    // A laptop's window at text 2, as a tab of the stage and alone: the decode row's every
    // weight drawn inside the window, nothing cut or overlapping.
    for (const bool alone : {false, true}) {
        const json l = run("1280x800", "2", alone);
        INFO((alone ? "alone" : "a tab of the stage"));
        CHECK(l.at("explain").at("phase") == "decode");
        // Every number of the diagram (q·k, scaled, mask, weight of each key) in the window,
        // and each key's weight recorded as drawn.
        const std::string panel = alone ? "inside_attention" : "group-inside";
        const int keys = l.at("explain").at("n_keys");
        CHECK(static_cast<int>(l.at("explain").at("drawn").at(0).at("weights").size()) == keys);
        const double W = l.at("width"), H = l.at("height");
        int numbers = 0;
        for (const auto& t : panel_texts(l, panel)) {
            const std::string s = t.at("text");
            if (s.empty() || s.find_first_not_of("-0123456789.e+") != std::string::npos ||
                s.find_first_of("0123456789") == std::string::npos)
                continue;
            ++numbers;
            const json& r = t.at("rect");
            INFO(s);
            CHECK(r.at("y").get<double>() + r.at("h").get<double>() <= H);
            CHECK(r.at("x").get<double>() + r.at("w").get<double>() <= W);
            CHECK_FALSE(t.at("clipped_y").get<bool>());
        }
        CHECK(numbers >= 4 * keys);
        for (const auto& p : text_problems(l)) FAIL_CHECK(p);
    }
}
