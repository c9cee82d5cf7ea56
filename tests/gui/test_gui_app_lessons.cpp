// Lessons in the window under Xvfb: a step drives the engine, Chinese glyphs, lesson 8's plot and
// grids, @serve, the first run, a lesson file's error, a question waiting for its answer.
#include <catch2/catch.hpp>

#include "tests/gui/gui_app_helpers.h"

using namespace kvs::gui_app_test;

// --- Lessons in the window ---

TEST_CASE("a lesson step drives the engine: lesson 1 at step 3 shows the toy's prefill",
          "[gui][screenshot][lessons]") {
    const Shot s = screenshot({"--lesson", "1", "--lesson-step", "3", "--theme", "light"}, "l1");
    CHECK(s.layout.at("model") == "toy");
    CHECK(s.layout.at("steps") == 1);  // step 2 of the lesson ran the prefill
    CHECK(s.layout.at("panels").contains("lesson"));
    // The step's @explain opens Inside attention under the stage (its band leaves the stage the
    // room for column tabs: the toy table and the tokens are tabs, not drawn).
    CHECK(s.layout.at("explain").at("open") == true);
    CHECK(s.layout.at("panels").contains("inside_attention"));
    const json& l = s.layout.at("lesson");
    CHECK(l.at("number") == 1);
    CHECK(l.at("step") == 3);
    CHECK(l.at("steps") == 4);
    CHECK(l.at("running") == false);
    CHECK(l.at("checks_passed") == 12);  // 6, and @explain's 6 (the window's target runs them)
    CHECK(l.at("checks_failed") == 0);
    CHECK(l.at("errors").empty());
    CHECK(l.at("shown_panel") == "attention");  // @show attention
    // @highlight layer=0 head=0 selected the head the text talks about: the "even" head, whose
    // first row has no key (drawn as "none") and whose masked cells are the mask colour.
    const json& hm = main_heatmap(s.layout);
    CHECK(hm.at("layer") == 0);
    CHECK(hm.at("head") == 0);
    REQUIRE(hm.at("n") == 4);
    const auto [ex, ey] = cell_centre(hm.at("rect"), 4, 0, 0);
    CHECK(s.image.at(ex, ey) == rgb(s.layout.at("colours").at("empty_row")));
    for (int q = 0; q < 4; ++q)
        for (int k = q + 1; k < 4; ++k) {
            const auto [x, y] = cell_centre(hm.at("rect"), 4, q, k);
            CHECK(s.image.at(x, y) == rgb(s.layout.at("colours").at("mask")));
        }
    // The framed panel is the attention panel: the highlight colour on its edge.
    const json& r = s.layout.at("panels").at("attention");
    const auto hl = rgb(s.layout.at("colours").at("highlight"));
    bool framed = false;
    for (int dy = 0; dy < 4 && !framed; ++dy)
        framed = s.image.at(r.at("x").get<double>() + r.at("w").get<double>() * 0.5,
                            r.at("y").get<double>() + dy) == hl;
    CHECK(framed);
}

TEST_CASE("lessons and the window's words in Chinese, every glyph in the font",
          "[gui][screenshot][lessons][zh]") {
    const Shot s = screenshot({"--lesson", "2", "--lesson-step", "2", "--lang", "zh"}, "zh");
    CHECK(s.layout.at("lang") == "zh");
    CHECK(s.layout.at("fonts").at("chinese") == true);
    // Every character of the Chinese strings and of every lesson is in the atlas (none is '?').
    CHECK(s.layout.at("fonts").at("missing_glyphs").empty());
    const json& l = s.layout.at("lesson");
    CHECK(l.at("title") == kvs::load_lesson(kvs::find_lesson("2", "zh")).title);
    CHECK(l.at("checks_failed") == 0);
    CHECK(l.at("checks_passed") == 5);
    CHECK(main_heatmap(s.layout).at("head") == 3);  // @highlight layer=0 head=3 (the all head)
    // The same step in English: another title, the same engine state.
    const Shot en = screenshot({"--lesson", "2", "--lesson-step", "2", "--lang", "en"}, "en");
    CHECK(en.layout.at("lang") == "en");
    CHECK(en.layout.at("lesson").at("title") ==
          kvs::load_lesson(kvs::find_lesson("2", "en")).title);
    CHECK(en.layout.at("lesson").at("title") != l.at("title"));
    CHECK(en.layout.at("tokens") == s.layout.at("tokens"));
}

TEST_CASE("lesson 8 plots time per step against batch size in the window",
          "[gui][screenshot][lessons]") {
    const Shot s = screenshot({"--lesson", "8", "--backend", "cpu"}, "batch");
    CHECK(s.layout.at("lesson").at("checks_failed") == 0);
    // The lesson's plot (the time panel records its own plots beside it when it is drawn).
    json p;
    for (const auto& q : s.layout.at("plots"))
        if (q.at("name") == "batch") p = q;
    REQUIRE(p.is_object());
    CHECK(p.at("x") == json({1.0, 2.0, 4.0, 8.0}));
    REQUIRE(p.at("series").size() == 2);
    for (const auto& [label, y] : p.at("series").items()) {
        INFO(label);
        REQUIRE(y.size() == 4);
        for (const auto& v : y) CHECK(v.get<double>() > 0);  // measured, every size
    }
}

TEST_CASE("a lesson's @serve shows the Serving view on the lesson's plan",
          "[gui][screenshot][lessons][serving]") {
    // Lesson 12's first step serves eight prompts in blocks of 16 rows, sharing off.
    const Shot s =
        screenshot({"--lesson", "12", "--lesson-step", "1", "--views", "lesson=off"}, "serve12");
    CHECK(s.layout.at("lesson").at("checks_failed") == 0);
    CHECK(s.layout.at("arrangement") == "serving");
    const json& v = s.layout.at("serving");
    CHECK(v.at("open") == true);
    CHECK(v.at("block_size") == 16);
    CHECK(v.at("states").size() == 8);
    // The pool the lesson's numbers count: its batch limit's contexts' worth (8 x 256 / 16).
    CHECK(v.at("blocks") == 128);
    CHECK(s.layout.at("panels").contains("lesson"));
    // Leaving the lesson (key L) gives the stage its panels back.
    const json off = json::parse(slurp(s.dir / "s-1.json"));
    CHECK(off.at("arrangement") != "serving");
    CHECK(off.at("serving").at("open") == false);
    CHECK(off.at("panels").contains("attention"));
}

TEST_CASE("each lesson step's Serving view shows the @serve it names, at the step it printed",
          "[gui][screenshot][lessons][serving]") {
    const auto view = [](const char* lesson, const char* step, const std::string& name) {
        const Shot s = screenshot({"--lesson", lesson, "--lesson-step", step}, name);
        CHECK(s.layout.at("lesson").at("checks_failed") == 0);
        return s.layout.at("serving");
    };
    // Lesson 12 step 4 asks about blocks of four rows, then runs blocks of one: the view shows
    // the four-row run (view=on), not the last.
    CHECK(view("12", "4", "v12-4").at("block_size") == 4);
    // Lesson 13 step 1: the prefix cache on (its first @serve), the found block held by every
    // running request, not the comparison without it.
    const json shared = view("13", "1", "v13-1");
    CHECK(shared.at("multi_holder_blocks").get<int>() > 0);
    CHECK(shared.at("shot").get<int>() > 0);
    CHECK(shared.at("prefix_cache") == true);
    // Lesson 13 step 4: the window of sixteen rows, at the step the most blocks were let go (the
    // tables' dashes), not the window of 800 that bounds nothing.
    const json window = view("13", "4", "v13-4");
    CHECK(window.at("let_go_entries").get<int>() > 0);
    CHECK(window.at("block_size") == 4);
    // A window turns the prefix cache off in the scheduler: the box says so, not what was asked.
    CHECK(window.at("prefix_cache") == false);
}

TEST_CASE("a first run opens lesson 1, N goes to the next step, and the place is remembered",
          "[gui][keys][lessons]") {
    REQUIRE(std::system("command -v xdotool >/dev/null") == 0);
    const fs::path dir = kvs::test::temp_dir("gui-first-run");
    const fs::path script = dir / "drive.sh";
    {
        std::ofstream f(script);
        f << kStartWindowAndFocus << R"(xdotool key n; sleep 0.8
xdotool key n; sleep 0.8
xdotool key b; sleep 0.8
kill -TERM $pid; wait $pid
)";
    }
    // No settings file yet: a first run.
    const std::string cmd = "cd " + quote(dir.string()) +
                            " && KVSCOPE_CONFIG_DIR=" + quote((dir / "cfg").string()) + " " +
                            quote(KVSCOPE_WITH_XVFB) + " bash " + quote(script.string()) + " " +
                            quote(KVSCOPE_GUI_BIN) + " >out 2>err";
    const int status = drive_window(
        cmd, dir, [&] { fs::remove_all(dir / "cfg"); }, "lesson-step = 2\n");
    INFO(slurp(dir / "err"));
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    const std::string settings = slurp(dir / "cfg" / "settings.txt");
    CHECK(settings.find("lesson = 1\n") != std::string::npos);
    CHECK(settings.find("lesson-step = 2\n") != std::string::npos);  // N, N, B: the second step
    CHECK(settings.find("model = toy\n") != std::string::npos);      // what the lesson loaded
    CHECK(settings.find("lang = en\n") != std::string::npos);
}

TEST_CASE("a lesson file with a mistake shows its FILE:LINE error in the lesson panel",
          "[gui][errors][lessons]") {
    // A copy of the lessons with a typo in lesson 2 and junk bytes as lesson 3.
    const fs::path dir = kvs::test::temp_dir("gui-bad-lessons");
    fs::copy(fs::path(KVSCOPE_SOURCE_DIR) / "lessons", dir / "lessons",
             fs::copy_options::recursive);
    const fs::path two = dir / "lessons" / "en" / "02-prefill.md";
    std::string text = slurp(two);
    const auto at = text.find("\n@prefill\n");
    REQUIRE(at != std::string::npos);
    text.replace(at, 10, "\n@prefil\n");
    std::ofstream(two, std::ios::binary) << text;
    const int line = static_cast<int>(std::count(text.begin(), text.begin() + at + 1, '\n')) + 1;
    std::vector<unsigned char> junk(300);
    for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<unsigned char>(i * 97 + 13);
    kvs::test::write_file(dir / "lessons" / "en" / "03-decode.md", junk);
    const std::string env = "env KVSCOPE_LESSONS=" + quote((dir / "lessons").string());
    for (const char* n : {"2", "3"}) {
        INFO("lesson " << n);
        const fs::path out = kvs::test::temp_dir("gui-bad-lessons-shot");
        const Run r = run_app({"--lesson", n, "--screenshot", (out / "s.png").string(),
                               "--layout-json", (out / "s.json").string()},
                              true, env);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const json l = json::parse(slurp(out / "s.json"));
        REQUIRE(l.at("lesson").at("errors").size() == 1);
        const std::string e = l.at("lesson").at("errors").at(0);
        if (std::string(n) == "2")
            CHECK(e.find("02-prefill.md:" + std::to_string(line) +
                         ": unknown directive '@prefil' (did you mean @prefill?)") !=
                  std::string::npos);
        else
            CHECK(e.find("03-decode.md:1: ") != std::string::npos);
        // Junk bytes in a lesson file do not cost the font its Chinese (中文, 生成: the language
        // button and the strings); only the junk's own odd characters may lack a glyph.
        for (const unsigned cp : {0x4E2Du, 0x6587u, 0x751Fu, 0x6210u})
            CHECK(std::find(l.at("fonts").at("missing_glyphs").begin(),
                            l.at("fonts").at("missing_glyphs").end(),
                            cp) == l.at("fonts").at("missing_glyphs").end());
        CHECK(l.at("lang") == "en");
    }
}

TEST_CASE("lesson 8 step 1 draws one KV grid per sequence, filled to the BatchSession's rows",
          "[gui][screenshot][lessons][batch]") {
    const Shot s =
        screenshot({"--lesson", "8", "--lesson-step", "1", "--backend", "cpu"}, "batch-caches");
    CHECK(s.layout.at("lesson").at("checks_failed") == 0);
    // The lesson's own @batch, its last size run here through the engine's BatchSession as the
    // sweep runs it (greedy, decode steps + 1 new tokens): the lengths the window must show.
    const kvs::Lesson lesson = kvs::load_lesson(kvs::find_lesson("8", "en"));
    const kvs::Directive* batch = nullptr;
    for (const auto& d : lesson.steps.at(0).directives)
        if (d.kind == kvs::DirectiveKind::Batch) batch = &d;
    REQUIRE(batch);
    const kvs::BatchPlan& plan = batch->batch;
    const int B = plan.sizes.back();
    std::vector<std::string> prompts;
    for (int i = 0; i < B; ++i) prompts.push_back(plan.prompts[i % plan.prompts.size()]);
    auto model = kvs::open_model("default");
    kvs::CpuBackend be;
    kvs::BatchSession bs(*model, be, plan.decode_steps + 1);
    bs.set_prompts(prompts);
    while (!bs.finished()) bs.step();
    const std::vector<int>& last = bs.steps().back().token_out;

    std::vector<json> grids;
    for (const auto& g : s.layout.at("kv_grids"))
        if (g.at("session").get<std::string>().rfind("prompt ", 0) == 0) grids.push_back(g);
    REQUIRE(static_cast<int>(grids.size()) == B);
    const int rows = 2 * model->config().kv_dim();
    int shortest = 1 << 30, longest = 0;
    for (int i = 0; i < B; ++i) {
        INFO("sequence " << i);
        const json& g = grids[i];
        const int len = bs.kv(i).len;
        shortest = std::min(shortest, len);
        longest = std::max(longest, len);
        CHECK(g.at("session") == "prompt " + std::to_string(i + 1));
        CHECK(g.at("columns") == len);
        CHECK(g.at("rows") == rows);
        // The row the last decode step wrote is outlined, only for the sequences it computed.
        if (last[i] >= 0)
            CHECK(g.at("written") == json({len - 1, len}));
        else
            CHECK(g.at("written") == json({0, 0}));
        // One column width for all, so the lengths compare by eye; the cells span the rows.
        const double cw = g.at("cell").at(0).get<double>(), ch = g.at("cell").at(1).get<double>();
        CHECK(cw == Approx(grids[0].at("cell").at(0).get<double>()));
        CHECK(g.at("rect").at("w").get<double>() == Approx(cw * len).margin(0.5));
        CHECK(g.at("rect").at("h").get<double>() == Approx(ch * rows).margin(0.5));
        // Side by side, left to right, without overlapping.
        if (i > 0)
            CHECK(g.at("rect").at("x").get<double>() >=
                  grids[i - 1].at("rect").at("x").get<double>() +
                      grids[i - 1].at("rect").at("w").get<double>());
    }
    CHECK(shortest < longest);  // the weather prompt stops early: a batch's caches are ragged
}

// --- Predict, then reveal: a lesson step's @ask in the window ---

TEST_CASE(
    "a lesson's question waits for the learner, the step runs on the answer, revealed "
    "beside theirs",
    "[gui][screenshot][lessons][ask]") {
    // Lesson 3, step 1 asks how many keys the decode step's query meets (5, the third choice).
    const Shot wait =
        screenshot({"--lesson", "3", "--answer", "wait", "--backend", "cpu"}, "ask-wait");
    const json& w = wait.layout.at("lesson");
    CHECK(w.at("ask").at("state") == "asking");
    CHECK(w.at("ask").at("question") ==
          kvs::load_lesson(kvs::find_lesson("3", "en")).steps[0].ask()->ask.question);
    CHECK(w.at("checks_passed") == 0);  // nothing ran: the question comes first
    CHECK(w.at("running") == false);
    CHECK(wait.layout.at("model") != "toy");         // the step's @model has not run either
    CHECK(line_has(wait.layout, "lesson", "3) 5"));  // the choices, keys 1-4
    CHECK(line_has(wait.layout, "lesson", "Predict:"));

    const Shot right =
        screenshot({"--lesson", "3", "--answer", "3", "--backend", "cpu"}, "ask-right");
    const json& r = right.layout.at("lesson");
    CHECK(r.at("ask").at("state") == "revealed");
    CHECK(r.at("ask").at("learner") == "5");
    CHECK(r.at("ask").at("engine") == "5");
    CHECK(r.at("ask").at("right") == 1);
    CHECK(r.at("checks_failed") == 0);
    CHECK(right.layout.at("model") == "toy");
    CHECK(right.layout.at("steps") == 2);  // the step ran: prefill and one decode step
    CHECK(line_has(right.layout, "lesson", "you predicted it"));

    const Shot wrong =
        screenshot({"--lesson", "3", "--answer", "1", "--backend", "cpu"}, "ask-wrong");
    CHECK(wrong.layout.at("lesson").at("ask").at("learner") == "1");
    CHECK(wrong.layout.at("lesson").at("ask").at("right") == 0);
    CHECK(line_has(wrong.layout, "lesson", "not what you predicted"));

    // In Chinese: the choice and the engine's answer in Chinese words (lesson 3, step 3 asks
    // why the toy stops: its end token).
    const Shot zh = screenshot({"--lesson", "3", "--lesson-step", "3", "--answer", "1", "--lang",
                                "zh", "--backend", "cpu"},
                               "ask-zh");
    const json& z = zh.layout.at("lesson").at("ask");
    CHECK(z.at("state") == "revealed");
    CHECK(z.at("engine") ==
          "\xE9\x81\x87\xE5\x88\xB0\xE7\xBB\x93\xE6\x9D\x9F token");  // 遇到结束 token
    CHECK(z.at("right") == 1);
    CHECK(zh.layout.at("fonts").at("missing_glyphs").empty());
    // Drawn as it reads, in bold: the bold font has no Chinese, which would come out as '?'.
    CHECK(line_has(
        zh.layout, "lesson",
        "\xE5\xBC\x95\xE6\x93\x8E\xE7\x9A\x84\xE7\xAD\x94\xE6\xA1\x88\xEF\xBC\x9A"
        "\xE9\x81\x87\xE5\x88\xB0\xE7\xBB\x93\xE6\x9D\x9F token"));  // 引擎的答案：遇到结束
}

TEST_CASE("a lesson's question and its choices fit at 1280x800 with text 2, both languages",
          "[gui][screenshot][lessons]") {
    // Waiting for the answer: the question, every choice and what to press, in view unscrolled.
    // Lessons 12 and 13: their longest questions in English, and one in Chinese; lessons 1, 8 and
    // 10: the longest of the others.
    const std::vector<std::tuple<const char*, const char*, const char*>> asks = {
        {"3", "1", "en"},  {"11", "1", "en"}, {"10", "2", "zh"}, {"1", "2", "zh"},
        {"12", "1", "en"}, {"13", "4", "en"}, {"13", "3", "zh"}, {"1", "4", "en"},
        {"8", "1", "en"},  {"10", "3", "en"}};
    for (const auto& [lesson, step, lang] : asks) {
        const json l = layout_of({"--backend", "cpu", "--lesson", lesson, "--lesson-step", step,
                                  "--answer", "wait", "--lang", lang},
                                 "1280x800", "2", std::string("ask-") + lesson + "-" + lang);
        INFO("lesson " << lesson << " step " << step << " " << lang);
        CHECK(l["lesson"]["ask"]["state"] == "asking");
        CHECK(l["lesson"]["ask"]["fits"] == true);
    }
}
