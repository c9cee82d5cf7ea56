// The presenter view under Xvfb: a panel shown alone draws its text larger than the stage does,
// every plot's legend entries are drawn inside the plot and its scale is said, and the Serving
// view's block tables draw every block number, at 1280x800 and 1920x1080, text 1 and 2, en and
// zh.
#include <catch2/catch.hpp>

#include "tests/gui/gui_app_helpers.h"

using namespace kvs::gui_app_test;

namespace {

// `r` inside `box`, give or take `slack` pixels (a Chinese glyph's quad reaches a pixel or two
// above its line's top).
bool inside(const json& r, const json& box, double slack = 0.5) {
    const double x = r.at("x"), y = r.at("y"), w = r.at("w"), h = r.at("h");
    const double bx = box.at("x"), by = box.at("y"), bw = box.at("w"), bh = box.at("h");
    return x >= bx - slack && y >= by - slack && x + w <= bx + bw + slack &&
           y + h <= by + bh + slack;
}

std::string no_spaces(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    return s;
}

// The texts drawn inside `box`, top to bottom, joined without spaces.
std::string texts_inside(const json& l, const json& box) {
    std::vector<std::pair<double, std::string>> got;
    for (const auto& t : l.at("texts"))
        if (inside(t.at("rect"), box, 3))
            got.emplace_back(
                t.at("rect").at("y").get<double>() * 1e4 + t.at("rect").at("x").get<double>(),
                t.at("text").get<std::string>());
    std::sort(got.begin(), got.end());
    std::string all;
    for (const auto& [_, s] : got) all += no_spaces(s);
    return all;
}

}  // namespace

TEST_CASE(
    "a panel shown alone draws its text larger than the stage with every panel does, and never "
    "smaller, at 1280x800 and 1920x1080, text 1 and 2, en and zh",
    "[gui][screenshot][stage][present]") {
    // (The attention panel alone grows its heatmap, and the numbers in its cells with them:
    // "larger text never shrinks a panel shown alone".)
    const std::vector<std::string> ids = {"tokens", "kv", "time", "next"};
    std::string views;
    for (const auto& id : ids) views += (views.empty() ? "maximise=" : ";maximise=") + id;
    for (const char* size : {"1280x800", "1920x1080"})
        for (const char* lang : {"en", "zh"})
            for (const char* scale : {"1", "2"}) {
                const std::string tag = std::string("present-") + size + "-" + lang + "-" + scale;
                const fs::path dir = kvs::test::temp_dir("gui-" + tag);
                const Run r =
                    run_app({"--backend", "cpu", "--lang", lang, "--model", "default", "--decode",
                             "3", "--size", size, "--font-scale", scale, "--views", views,
                             "--layout-json", (dir / "l.json").string()});
                INFO(tag << ": " << r.err);
                REQUIRE(r.exit_code == 0);
                const json grid = json::parse(slurp(dir / "l.json"));
                const double stage_h = median_text_h(grid);
                for (std::size_t v = 0; v < ids.size(); ++v) {
                    const json alone =
                        json::parse(slurp(dir / ("l-" + std::to_string(v + 1) + ".json")));
                    const double h = median_text_h(alone);
                    INFO(tag << ": " << ids[v] << " alone " << h << " px, the stage ("
                             << grid.at("arrangement") << ") " << stage_h << " px");
                    CHECK(h + 0.5 >= stage_h);
                    // Where the stage tiles its panels (text 1), alone has the room to grow.
                    if (grid.at("arrangement") == "tiled") CHECK(h >= stage_h * 1.3);
                    for (const auto& p : text_problems(alone)) FAIL_CHECK(p);
                }
            }
}

TEST_CASE(
    "every legend entry of the memory-traffic plot is drawn inside the plot, and its scale is "
    "chosen and said, at 1280x800 and 1920x1080, text 1 and 2, en and zh, alone and on the "
    "stage",
    "[gui][screenshot][present]") {
    for (const char* size : {"1280x800", "1920x1080"})
        for (const char* lang : {"en", "zh"})
            for (const char* scale : {"1", "2"}) {
                const std::string tag = std::string("legend-") + size + "-" + lang + "-" + scale;
                const fs::path dir = kvs::test::temp_dir("gui-" + tag);
                const Run r = run_app({"--backend", "cpu", "--lang", lang, "--model", "default",
                                       "--decode", "20", "--cache", "compare", "--size", size,
                                       "--font-scale", scale, "--views", "maximise=time",
                                       "--layout-json", (dir / "l.json").string()});
                INFO(tag << ": " << r.err);
                REQUIRE(r.exit_code == 0);
                for (const char* file : {"l.json", "l-1.json"}) {
                    const json l = json::parse(slurp(dir / file));
                    INFO(tag << " " << file);
                    // On the stage the Time panel may be a tab not shown (one at a time).
                    bool has_bytes = false;
                    for (const auto& p : l.at("plots"))
                        has_bytes = has_bytes || p.at("name") == "bytes";
                    if (std::string(file) == "l.json" && !has_bytes) continue;
                    const json& plot = plot_named(l, "bytes");
                    const json& box = plot.at("rect");
                    REQUIRE(box.at("w").get<double>() > 0);
                    // Two sessions' K/V and the weights: every label drawn, in the plot's box.
                    REQUIRE(plot.at("series").size() == 3);
                    REQUIRE(plot.at("legend").size() == 3);
                    const std::string drawn = texts_inside(l, box);
                    // On a short stage the plot is a scroll away: its texts are drawn (and
                    // checked) where its box is in view.
                    const bool in_view = inside(box, l.at("panels").at("time"));
                    for (const auto& e : plot.at("legend")) {
                        const std::string label = e.at("label");
                        INFO(label << " in " << drawn);
                        CHECK(inside(e.at("rect"), box));
                        if (in_view) CHECK(drawn.find(no_spaces(label)) != std::string::npos);
                    }
                    // Weights 3.48 MiB against K/V 10-25 KiB: a gap a linear axis shows (log
                    // would put it two gridlines apart), and the title says so.
                    CHECK_FALSE(plot.at("log_y").get<bool>());
                    const std::string said = std::string(lang) == "zh" ? "线性刻度" : "linearscale";
                    if (in_view) CHECK(drawn.find(said) != std::string::npos);
                    for (const auto& p : text_problems(l)) FAIL_CHECK(p);
                }
            }
}

TEST_CASE(
    "the Serving view's block tables draw every block number, at 1280x800 and 1920x1080, text 1 "
    "and 2, en and zh",
    "[gui][screenshot][serving][present]") {
    // Blocks of 2 rows (the built-in prompts), and of 1 row with twelve longer prompts: tables
    // of tens of entries, block numbers of two digits.
    const fs::path dir0 = kvs::test::temp_dir("gui-serving-numbers");
    {
        std::ofstream p(dir0 / "prompts.txt");
        for (int i = 0; i < 12; ++i)
            p << "Once upon a time there was a little girl named Lily who loved to play " << i
              << "\n";
    }
    struct Case {
        std::vector<std::string> args;
        const char* name;
    };
    const std::vector<Case> cases = {
        {{"--serve-steps", "12", "--serve-block-size", "2"}, "two-digit"},
        {{"--serve-steps", "40", "--serve-block-size", "1", "--serve-prompts",
          (dir0 / "prompts.txt").string()},
         "long-tables"}};
    for (const auto& c : cases)
        for (const char* size : {"1280x800", "1920x1080"})
            for (const char* lang : {"en", "zh"})
                for (const char* scale : {"1", "2"}) {
                    const std::string tag =
                        std::string(c.name) + "-" + size + "-" + lang + "-" + scale;
                    const fs::path dir = kvs::test::temp_dir("gui-serving-" + tag);
                    std::vector<std::string> a = {
                        "--backend", "cpu", "--model",       "default",
                        "--size",    size,  "--font-scale",  scale,
                        "--lang",    lang,  "--layout-json", (dir / "l.json").string()};
                    a.insert(a.end(), c.args.begin(), c.args.end());
                    const Run r = run_app(a);
                    INFO(tag << ": " << r.err);
                    REQUIRE(r.exit_code == 0);
                    const json l = json::parse(slurp(dir / "l.json"));
                    const json& s = l.at("serving");
                    REQUIRE(s.at("open").get<bool>());
                    // Every entry's cell in view (the view scrolls past the window's bottom)
                    // holds its block number, as a text of its own.
                    const double window_h = l.at("height").get<double>();
                    int in_view = 0, drawn = 0;
                    std::string missing;
                    for (const auto& entry : s.at("table_cells")) {
                        const json& cell = entry.at("rect");
                        if (cell.at("y").get<double>() + cell.at("h").get<double>() > window_h)
                            continue;
                        ++in_view;
                        const std::string want = std::to_string(entry.at("block").get<int>());
                        bool found = false;
                        for (const auto& t : l.at("texts"))
                            found = found || (t.at("text") == want && inside(t.at("rect"), cell) &&
                                              !t.at("clipped_x").get<bool>());
                        if (found)
                            ++drawn;
                        else
                            missing += " " + want;
                    }
                    INFO(tag << ": " << drawn << " of " << in_view << " entries in view show "
                             << "their number; missing:" << missing);
                    CHECK(in_view >= 8);
                    CHECK(drawn == in_view);
                    for (const auto& p : text_problems(l)) FAIL_CHECK(p);
                }
}
