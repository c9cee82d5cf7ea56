// The Next token panel's sampling stages and the map of the step, in the window under Xvfb: the
// numbers drawn are `kvscope-cli explain --show sampling --json`'s at the same settings (the
// draw, and a preview when the controls move), a click on a map column opens Inside attention
// at that layer, and neither view's text overlaps or is cut at 1280x800 and 1920x1080, text 1
// and 2, English and Chinese.
#include <catch2/catch.hpp>

#include "tests/gui/gui_app_helpers.h"

using namespace kvs::gui_app_test;

namespace {

const char* kPrompt = "The capital of France is";

json explain_sampling(const std::string& t, const std::string& k, const std::string& p) {
    const auto r = kvs::test::run_cli(
        {"explain",       "--model", "default", "--backend", "cpu",      "--prompt",
         kPrompt,         "--step",  "0",       "--show",    "sampling", "--json",
         "--temperature", t,         "--top-k", k,           "--top-p",  p,
         "--seed",        "42"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out).at("sampling");
}

// Numbers as the panel writes them (gui/views/sampling_view.h): a logit with two decimals, a
// probability in percent, small ones with two significant digits, below a millionth 0.0%.
std::string logit_text(float v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", static_cast<double>(v));
    return b;
}
std::string probability_text(float p) {
    char b[32];
    const double pct = 100.0 * p;
    std::snprintf(b, sizeof b, pct >= 0.1 || pct < 1e-4 ? "%.1f%%" : "%.2g%%", pct);
    return b;
}

bool same(const json& a, const json& b) {
    return static_cast<float>(a.get<double>()) == static_cast<float>(b.get<double>());
}

// The stages the window drew (its layout record) against the CLI's, entry by entry.
void check_stages(const json& drawn, const json& cli, bool preview) {
    REQUIRE(drawn.at("drawn").get<bool>());
    CHECK(drawn.at("preview").get<bool>() == preview);
    CHECK(same(drawn.at("temperature"), cli.at("temperature")));
    CHECK(drawn.at("top_k") == cli.at("top_k"));
    CHECK(same(drawn.at("top_p"), cli.at("top_p")));
    if (!preview) {
        CHECK(same(drawn.at("coin"), cli.at("coin")));
        CHECK(drawn.at("drawn_id") == cli.at("drawn"));
    } else {
        CHECK(drawn.at("coin").get<double>() < 0);
        CHECK(drawn.at("drawn_id") == -1);
    }
    const json& entries = cli.at("entries");
    const json& ids = drawn.at("ids");
    // The window lists as many as its panel holds, most likely first: the CLI's first ones.
    const std::size_t n = std::min<std::size_t>(ids.size(), 10);
    REQUIRE(n >= 3);
    for (std::size_t i = 0; i < n && i < entries.size(); ++i) {
        const json& e = entries[i];
        if (!preview && e.at("id") != ids[i]) break;  // the drawn one, listed last by both
        INFO("entry " << i << " id " << e.at("id"));
        CHECK(ids[i] == e.at("id"));
        CHECK(same(drawn.at("logit")[i], e.at("logit")));
        CHECK(same(drawn.at("scaled")[i], e.at("scaled_logit")));
        CHECK(same(drawn.at("tempered")[i], e.at("p_tempered")));
        CHECK(same(drawn.at("top_k_p")[i], e.at("p_top_k")));
        CHECK(same(drawn.at("final")[i], e.at("p_final")));
    }
}

}  // namespace

TEST_CASE(
    "the Next token panel draws the stages kvscope-cli explain prints, and a preview that "
    "reshapes as the controls move",
    "[gui][sampling]") {
    const fs::path dir = kvs::test::temp_dir("gui-sampling");
    const std::string l = (dir / "l.json").string();
    const Run r = run_app({"--model",
                           "default",
                           "--backend",
                           "cpu",
                           "--prompt",
                           kPrompt,
                           "--prefill",
                           "--temperature",
                           "2",
                           "--top-k",
                           "5",
                           "--top-p",
                           "1",
                           "--seed",
                           "42",
                           "--maximise",
                           "next",
                           "--size",
                           "1280x800",
                           "--layout-json",
                           l,
                           "--views",
                           "temperature=0.5;top-k=3;top-p=0.5;temperature=0"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // The draw the step made, at the command line's settings.
    const json drawn = json::parse(slurp(l));
    const json cli = explain_sampling("2", "5", "1");
    check_stages(drawn.at("sampling"), cli, false);
    // Each number as the panel writes it, and the rule line with the coin.
    for (std::size_t i = 0; i < 5; ++i) {
        const float p = drawn.at("sampling").at("final")[i].get<float>();
        if (p > 0) CHECK(line_has(drawn, "next", probability_text(p)));
        CHECK(
            line_has(drawn, "next", logit_text(drawn.at("sampling").at("logit")[i].get<float>())));
    }
    CHECK(line_has(drawn, "next", "--temperature 2 --top-k 5 --top-p 1 --seed 42"));
    CHECK(line_has(drawn, "next", "walks the cumulative mass"));
    // The controls moved, one after another: the same logits reshaped, marked as a preview.
    const json t05 = json::parse(slurp(dir / "l-1.json"));
    check_stages(t05.at("sampling"), explain_sampling("0.5", "5", "1"), true);
    CHECK(line_has(t05, "next", "preview"));
    CHECK(t05.at("sampling").at("tempered")[0].get<double>() >
          drawn.at("sampling").at("tempered")[0].get<double>());
    const json k3 = json::parse(slurp(dir / "l-2.json"));
    check_stages(k3.at("sampling"), explain_sampling("0.5", "3", "1"), true);
    CHECK(k3.at("sampling").at("top_k_p")[3].get<double>() == 0);
    const json p05 = json::parse(slurp(dir / "l-3.json"));
    check_stages(p05.at("sampling"), explain_sampling("0.5", "3", "0.5"), true);
    // Greedy has no stages: the table of the most likely tokens.
    const json greedy = json::parse(slurp(dir / "l-4.json"));
    CHECK_FALSE(greedy.at("sampling").at("drawn").get<bool>());
    CHECK(greedy.at("next_tokens_shown").get<int>() > 0);
}

TEST_CASE("a click on a layer's column of the map opens Inside attention at that layer",
          "[gui][map][keys]") {
    REQUIRE(std::system("command -v xdotool >/dev/null") == 0);
    const std::vector<std::string> args = {"--model",    "default", "--backend", "cpu",
                                           "--prompt",   kPrompt,   "--decode",  "2",
                                           "--maximise", "map"};
    // Where the columns are: the same window drawn headless.
    std::vector<std::string> where = args;
    const Shot shot = screenshot(where, "map-where");
    const json& cols = shot.layout.at("map").at("columns");
    REQUIRE(cols.size() == 4);
    const json& rect = cols[2].at("rect");
    const int x = static_cast<int>(rect.at("x").get<double>() + rect.at("w").get<double>() * 0.5);
    const int y = static_cast<int>(rect.at("y").get<double>() + rect.at("h").get<double>() * 0.5);
    const fs::path dir = kvs::test::temp_dir("gui-map-click");
    const fs::path script = dir / "drive.sh";
    {
        std::ofstream f(script);
        f << kStartWindowAndFocus << "sleep 1\nxdotool mousemove " << x << " " << y
          << " click 1; sleep 0.8\nkill -TERM $pid; wait $pid\n";
    }
    const auto write_settings = [&] {
        fs::create_directories(dir / "cfg");
        std::ofstream(dir / "cfg" / "settings.txt") << "layer = 0\n";
    };
    std::string cmd = "cd " + quote(dir.string()) +
                      " && KVSCOPE_CONFIG_DIR=" + quote((dir / "cfg").string()) + " " +
                      quote(KVSCOPE_WITH_XVFB) + " bash " + quote(script.string()) + " " +
                      quote(KVSCOPE_GUI_BIN);
    for (const auto& a : args) cmd.append(" ").append(quote(a));
    cmd += " >out 2>err";
    const int status = drive_window(
        cmd, dir,
        [&] {
            fs::remove_all(dir / "cfg");
            write_settings();
        },
        "layer = 2\n");
    INFO(slurp(dir / "err"));
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // The heatmap shown large and Inside attention follow the layer clicked.
    CHECK(slurp(dir / "cfg" / "settings.txt").find("layer = 2\n") != std::string::npos);
}

TEST_CASE(
    "no text of the sampling stages or the map overlaps or is cut, at 1280x800 and "
    "1920x1080, text 1 and 2, English and Chinese",
    "[gui][overlap][sampling][map]") {
    // The stage tiled (or tabbed) with the stages drawn, then each view alone, the preview, and
    // the map beside Inside attention after a click's worth of settings.
    const std::string views =
        "maximise=next;maximise=map;maximise=next,temperature=0.5,top-k=3,top-p=0.5;"
        "maximise=,explain=2:0:last";
    int checked = 0;
    for (const char* size : {"1280x800", "1920x1080"})
        for (const char* scale : {"1", "2"})
            for (const char* lang : {"en", "zh"}) {
                const std::string tag = std::string(size) + "-" + scale + "-" + lang;
                const fs::path dir = kvs::test::temp_dir("gui-sampling-map-" + tag);
                const std::string l = (dir / "l.json").string();
                const Run r =
                    run_app({"--model",  "default", "--backend",     "cpu", "--prompt",     kPrompt,
                             "--decode", "3",       "--temperature", "2",   "--top-k",      "5",
                             "--top-p",  "1",       "--size",        size,  "--font-scale", scale,
                             "--lang",   lang,      "--layout-json", l,     "--views",      views});
                INFO(tag << ": " << r.err);
                REQUIRE(r.exit_code == 0);
                for (int v = 0; v <= 4; ++v) {
                    const fs::path file =
                        v == 0 ? fs::path(l) : dir / ("l-" + std::to_string(v)).append(".json");
                    INFO(file);
                    const json layout = json::parse(slurp(file));
                    if (v == 1 || v == 3) CHECK(layout.at("sampling").at("drawn").get<bool>());
                    if (v == 2) CHECK(layout.at("map").at("drawn").get<bool>());
                    for (const auto& p : text_problems(layout)) FAIL_CHECK(p);
                    ++checked;
                }
            }
    CHECK(checked == 40);
}
