// The window's text and sizes under Xvfb: the text checker, no text overlapping or cut in any
// configuration or view, larger text never shrinking a graphic, the Serving view at text 2.
#include <catch2/catch.hpp>

#include "tests/gui/gui_app_helpers.h"

using namespace kvs::gui_app_test;

TEST_CASE("the text checker finds overlapping and clipped labels", "[gui][overlap]") {
    json l;
    l["texts"] = json::array({text_item("masked", 10, 10, 50, 16), text_item("new", 70, 10, 30, 16),
                              text_item("below", 10, 27, 50, 16)});
    CHECK(text_problems(l).empty());
    l.at("texts").push_back(text_item("new this step", 40, 14, 80, 16));  // runs into "masked"
    const auto p = text_problems(l);
    REQUIRE(p.size() == 3);  // with "masked", "new" and "below"
    CHECK(p[0].find("\"masked\"") != std::string::npos);
    l["texts"] = json::array({text_item("89.4 MFL", 10, 10, 50, 16, true)});
    REQUIRE(text_problems(l).size() == 1);
    CHECK(text_problems(l)[0] == "clipped in p: \"89.4 MFL\"");
    // In a window that scrolls down: cut at its bottom is a scroll away, cut at its right is not.
    l["texts"] = json::array({text_item("a row below", 10, 490, 50, 16, false, true, true)});
    CHECK(text_problems(l).empty());
    l["texts"] = json::array({text_item("a long line", 470, 10, 50, 16, true, true)});
    REQUIRE(text_problems(l).size() == 1);
    CHECK(text_problems(l)[0] == "clipped in p: \"a long line\"");
}

namespace {

// Runs each configuration's window on one virtual display, two at a time (the machine has two
// cores), writing layout records only (a 4K PNG's compression takes a third of each run's time):
// the first frame's TAG.json, then TAG-N.json for each of its --views. Checks that every record
// has more than `min_texts` texts and none overlapping or cut; returns how many it checked.
int check_layouts(const std::vector<StageConfig>& configs, const std::string& name,
                  std::size_t min_texts) {
    const fs::path dir = kvs::test::temp_dir(name);
    std::ofstream list(dir / "runs");
    for (const auto& c : configs) {
        std::string cmd = quote(KVSCOPE_GUI_BIN);
        for (const auto& a : c.args) cmd.append(" ").append(quote(a));
        const std::string base = (dir / c.tag).string();
        cmd += " --layout-json " + quote(base + ".json") + " >" + quote(base + ".err") + " 2>&1";
        list << cmd << "\n";
    }
    list.close();
    const std::string script = "xargs -d '\\n' -P 2 -n 1 sh -c < " + quote((dir / "runs").string());
    std::string err;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const std::string cmd = "KVSCOPE_XVFB_SCREEN=3840x2160x24 " + quote(KVSCOPE_WITH_XVFB) +
                                " sh -c " + quote(script) + " 2>" + quote((dir / "err").string());
        (void)std::system(cmd.c_str());
        err = slurp(dir / "err");
        if (!xvfb_trouble(err)) break;
    }
    INFO(err);
    int checked = 0;
    for (const auto& c : configs)
        for (int v = 0; v <= c.views; ++v) {
            std::string file = c.tag;
            if (v > 0) file.append("-").append(std::to_string(v));
            file.append(".json");
            INFO(file << ": " << slurp(dir / (c.tag + ".err")));
            REQUIRE(fs::exists(dir / file));
            const json layout = json::parse(slurp(dir / file));
            REQUIRE(layout.at("texts").size() > min_texts);
            for (const auto& p : text_problems(layout)) FAIL_CHECK(p);
            ++checked;
        }
    return checked;
}

}  // namespace

TEST_CASE("no text overlaps another or is cut off, at every size, text size, language and mode",
          "[gui][overlap][matrix]") {
    const auto configs = stage_matrix();
    CHECK(check_layouts(configs, "gui-stage-matrix", 20) == static_cast<int>(configs.size()));
}

TEST_CASE(
    "no text overlaps or is cut in the stage's views: every panel alone, every stage of "
    "the row, causal and bidirectional, at every size, text size and language",
    "[gui][overlap][matrix][stage]") {
    // One start of the window per size x text x language and model, several views each
    // (--views): each panel shown alone (the map of the step too), the row's fourteen stages (where
    // q, k and v come from, then the arithmetic), the bidirectional view, the inside panel alone at
    // three stages; and on the toy with lesson 1 open, its table, the lesson, the toy's row alone,
    // a stage of its arithmetic and a projection stage (which the toy has not). Layout records
    // only.
    const std::string views_default =
        "maximise=tokens;maximise=attention;maximise=kv;maximise=time;maximise=next;"
        "maximise=inside;maximise=ops;maximise=map;maximise=,stage=1;stage=2;stage=3;stage=4;"
        "stage=5;stage=6;stage=7;stage=8;stage=9;stage=10;stage=11;stage=12;stage=13;stage=14;"
        "stage=all,mask=bidirectional;maximise=inside,stage=10;maximise=inside,stage=3;"
        "maximise=inside,stage=6";
    const std::string views_toy =
        "maximise=toy;maximise=lesson;maximise=inside;maximise=,stage=10;stage=3";
    std::vector<StageConfig> launches;
    for (const char* size : {"1280x800", "1920x1080", "3840x2160"})
        for (const char* scale : {"1", "1.5", "2"})
            for (const char* lang : {"en", "zh"}) {
                const std::string tag = std::string(size) + "-" + scale + "-" + lang;
                const std::vector<std::string> common = {"--size", size, "--font-scale", scale,
                                                         "--lang", lang, "--backend",    "cpu"};
                StageConfig d{tag + "-default", common, 26};
                d.args.insert(d.args.end(), {"--model", "default", "--decode", "3", "--explain",
                                             "1,0,last", "--views", views_default});
                StageConfig t{tag + "-toy", common, 5};
                t.args.insert(t.args.end(), {"--model", "toy", "--lesson", "1", "--lesson-step",
                                             "3", "--views", views_toy});
                launches.push_back(d);
                launches.push_back(t);
            }
    CHECK(check_layouts(launches, "gui-stage-views", 10) == 18 * (27 + 6));
}

TEST_CASE("larger text never shrinks lesson 10's heatmaps, nor the stage's with Inside attention",
          "[gui][screenshot][stage][lessons]") {
    // Lesson 10's step 2 sets the stage (the two sessions' heatmaps beside the lesson), its notes
    // (max |dK| per layer) beside or after the heatmaps when above them they would not fit.
    for (const char* size : {"1280x800", "1920x1080"}) {
        const std::vector<std::string> a = {"--backend", "cpu",           "--lesson",
                                            "10",        "--lesson-step", "2"};
        const json l1 = layout_of(a, size, "1", std::string("l10-1-") + size);
        const json l2 = layout_of(a, size, "2", std::string("l10-2-") + size);
        const auto one = main_heat_sides(l1);
        const auto two = main_heat_sides(l2);
        INFO(size << ": text 1 " << one.front() << " px, text 2 " << two.front() << " px");
        REQUIRE(one.size() == 2);
        REQUIRE(two.size() == 2);
        CHECK(one.front() > 150);
        CHECK(two.front() + 0.5 >= one.front());
        // The lesson's column widens with the text as far as that leaves the heatmaps their
        // size (at 1280x800 the two heatmaps' label columns hold it to a few pixels more).
        const double w1 = l1.at("panels").at("lesson").at("w").get<double>();
        const double w2 = l2.at("panels").at("lesson").at("w").get<double>();
        INFO("lesson column: text 1 " << w1 << " px, text 2 " << w2 << " px");
        CHECK(w2 > w1 + 5);
    }
    // Inside attention open on a laptop's screen: at text 1.5 and 2 the heatmap, where drawn, is
    // as large as at text 1 (the inside panel a tab of the stage when nothing else holds it).
    const std::vector<std::string> a = {"--backend", "cpu", "--model",   "default",
                                        "--decode",  "3",   "--explain", "1,0,last"};
    const auto one = main_heat_sides(layout_of(a, "1280x800", "1", "inside-1"));
    REQUIRE(!one.empty());
    for (const char* scale : {"1.5", "2"}) {
        const json l = layout_of(a, "1280x800", scale, std::string("inside-") + scale);
        for (double w : main_heat_sides(l)) {
            INFO("text " << scale << ": " << w << " px against " << one.front());
            CHECK(w + 0.5 >= one.front());
        }
        for (const auto& p : text_problems(l)) FAIL_CHECK(p);
    }
}

TEST_CASE(
    "larger text never shrinks a panel shown alone (keys 1-9), at 1280x800 and 1920x1080, "
    "both languages, and Inside attention as a tab keeps its numbers",
    "[gui][screenshot][stage]") {
    // One start per size, text size, language and model, a record per panel alone (--views).
    const std::vector<std::string> ids_default = {"tokens", "attention", "kv", "time",
                                                  "next",   "inside",    "ops"};
    const std::vector<std::string> ids_toy = {"toy", "lesson"};
    auto views_of = [](const std::vector<std::string>& ids) {
        std::string v;
        for (const auto& id : ids) {
            if (!v.empty()) v += ";";
            v += "maximise=";
            v += id;
        }
        return v;
    };
    for (const char* size : {"1280x800", "1920x1080"})
        for (const char* lang : {"en", "zh"})
            for (bool toy : {false, true}) {
                const auto& ids = toy ? ids_toy : ids_default;
                std::vector<std::string> a = {"--backend", "cpu", "--lang", lang};
                if (toy)
                    a.insert(a.end(), {"--model", "toy", "--lesson", "1", "--lesson-step", "3"});
                else
                    a.insert(a.end(),
                             {"--model", "default", "--decode", "3", "--explain", "1,0,last"});
                a.insert(a.end(), {"--views", views_of(ids)});
                std::vector<std::vector<double>> got(2);
                for (int t = 0; t < 2; ++t) {
                    const std::string scale = t == 0 ? "1" : "2";
                    const std::string tag = std::string("alone-") + size + "-" + lang + "-" +
                                            (toy ? "toy" : "default") + "-" + scale;
                    const fs::path dir = kvs::test::temp_dir("gui-fits-" + tag);
                    std::vector<std::string> b = a;
                    b.insert(b.end(), {"--size", size, "--font-scale", scale, "--layout-json",
                                       (dir / "l.json").string()});
                    const Run r = run_app(b);
                    INFO(r.err);
                    REQUIRE(r.exit_code == 0);
                    for (std::size_t v = 0; v < ids.size(); ++v) {
                        const fs::path file = dir / ("l-" + std::to_string(v + 1) + ".json");
                        REQUIRE(fs::exists(file));
                        got[t].push_back(presenter_visual(json::parse(slurp(file)), ids[v]));
                    }
                }
                for (std::size_t v = 0; v < ids.size(); ++v) {
                    INFO(size << " " << lang << ": " << ids[v] << " alone: text 1 " << got[0][v]
                              << " px, text 2 " << got[1][v] << " px");
                    CHECK(got[0][v] > 8);
                    // Glyphs of the same pixel size differ by a pixel or two between a font
                    // rasterised at that size and one drawn scaled (Inside attention alone at
                    // text 1 draws its numbers at twice the text): 10% for text lines. A
                    // panel alone draws its text scaled to the room (alone_zoom): the heatmap's
                    // label column, measured in the glyphs of a 16 px font drawn at 2.5x or a
                    // 32 px one at 1.25x, differs by under a pixel: 1.5 px for graphics.
                    const bool graphic =
                        ids[v] == "attention" || ids[v] == "kv" || ids[v] == "time";
                    CHECK(got[1][v] + (graphic ? 1.5 : 0.1 * got[0][v]) >= got[0][v]);
                }
            }
    // Inside attention as a tab of the stage at 1280x800 text 2 (the stage shown one panel at a
    // time): every key's weight drawn, as the CLI's row has them.
    const json l = layout_of(
        {"--backend", "cpu", "--model", "default", "--decode", "3", "--explain", "1,0,last"},
        "1280x800", "2", "inside-tab");
    CHECK(l.at("arrangement") == "one-at-a-time");
    CHECK(l.at("explain").at("open").get<bool>());
    const int T = l.at("explain").at("n_keys").get<int>();
    // The weights column itself (another column's 0.5 is not a weight), beside the scores: each
    // key row the tab draws shows its score and its weight; rows past the tab's height are
    // reached by scrolling it.
    const auto weights = column_texts(l, "softmax w", "group-inside");
    const auto scores = column_texts(l, "q·k_j", "group-inside");
    INFO(T << " keys, " << weights.size() << " weights drawn");
    CHECK(T == 8);
    CHECK(!weights.empty());
    CHECK(weights.size() == scores.size());
    for (const auto& w : weights) CHECK((std::stod(w) >= 0 && std::stod(w) <= 1));
    bool scrolls = false;
    for (const auto& t : panel_texts(l, "group-inside")) scrolls = scrolls || t.at("scrolls_y");
    if (static_cast<int>(weights.size()) < T) CHECK(scrolls);
    for (const auto& p : text_problems(l)) FAIL_CHECK(p);
}

TEST_CASE(
    "the Serving view: its grid keeps its text-1 size at text 2, no text overlaps or is cut, "
    "in both languages, and the step shown shares the prefix and holds less than contiguous "
    "caches",
    "[gui][screenshot][serving]") {
    // The default model, the built-in eight prompts, 12 scheduler steps (4 running, 4 queued).
    auto run = [](const std::string& size, const std::string& scale, const std::string& lang) {
        const fs::path dir = kvs::test::temp_dir("gui-serving-" + size + scale + lang);
        const Run r = run_app({"--backend", "cpu", "--model", "default", "--serve-steps", "12",
                               "--size", size, "--font-scale", scale, "--lang", lang,
                               "--layout-json", (dir / "l.json").string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        return json::parse(slurp(dir / "l.json"));
    };
    for (const std::string size : {"1920x1080", "1280x800"}) {
        const json one = run(size, "1", "en");
        for (const std::string lang : {"en", "zh"}) {
            const json two = run(size, "2", lang);
            for (const json* l : {&one, &two}) {
                const json& s = l->at("serving");
                INFO(size << " " << lang << " text " << (l == &one ? 1 : 2));
                REQUIRE(s.at("open").get<bool>());
                CHECK(l->at("arrangement") == "serving");
                CHECK(s.at("shot").get<int>() == 12);
                CHECK(s.at("states").size() == 8);
                CHECK(s.at("multi_holder_blocks").get<int>() > 0);
                CHECK(s.at("used_blocks").get<int>() < s.at("contiguous_blocks").get<int>());
                CHECK(s.at("blocks").get<int>() <=
                      s.at("cols").get<int>() *
                          std::ceil(s.at("blocks").get<double>() / s.at("cols").get<double>()));
                const auto problems = text_problems(*l);
                std::string all;
                for (const auto& p : problems) all += p + "\n";
                INFO(all);
                CHECK(problems.empty());
            }
            const double c1 = one.at("serving").at("cell"), c2 = two.at("serving").at("cell");
            INFO(size << " " << lang << ": cell at text 1 " << c1 << " px, at text 2 " << c2);
            CHECK(c1 >= 40);
            CHECK(c2 + 0.5 >= c1);
        }
    }
}

TEST_CASE("the Serving view's prompts file that cannot be read is one line and exit 2",
          "[gui][serving]") {
    const fs::path dir = kvs::test::temp_dir("gui-serving-bad");
    std::ofstream(dir / "blank.txt") << "\n\n";
    for (const std::string& f : {(dir / "none.txt").string(), (dir / "blank.txt").string()}) {
        const Run r = run_app({"--serve-prompts", f, "--layout-json", (dir / "l.json").string()});
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("--serve-prompts") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_FALSE(fs::exists(dir / "l.json"));
    }
}
