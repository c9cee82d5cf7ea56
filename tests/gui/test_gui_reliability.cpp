// Bad input on the window's data side, without a display: remembered settings checked field by
// field, font files checked before ImGui sees them, and a model whose context is shorter than the
// prompt. The same under a real window: test_gui_app.cpp.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

#include "core/util/error.h"
#include "gui/app/quit_signal.h"
#include "gui/draw/font_check.h"
#include "gui/draw/png_text.h"
#include "gui/engine/engine_worker.h"
#include "gui/state/options.h"
#include "gui/state/settings.h"
#include "gui/views/layout_record.h"
#include "kernels/backend_factory.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using namespace kvs::gui;
namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += x + "\n";
    return s;
}

}  // namespace

TEST_CASE("settings: every bad field is named, its default used, and never saved back",
          "[gui][settings][reliability]") {
    const std::string text =
        "temperature = -5\ntop-k = -1\ntop-p = 2\nweight-scale = cubic\nbackend = quantum\n"
        "font-scale = nan\nseed = 1.5\nlayer = 99999999999\nplay-speed = inf\ncache = maybe\n"
        "model =\nlog-time = yes\nlesson-step = 0\ntheme = \x1b[2Jpink\n"
        "lesson = 3\nprompt = kept as it is\nunknown-key = whatever\nscreenshot = not.png\n";
    std::vector<std::string> problems;
    const Settings s = parse_settings(text, "settings.txt", &problems);
    INFO(joined(problems));
    const Settings d;
    CHECK(s.temperature == d.temperature);
    CHECK(s.top_k == d.top_k);
    CHECK(s.top_p == d.top_p);
    CHECK(s.weight_scale == d.weight_scale);
    CHECK(s.backend == d.backend);
    CHECK(s.font_scale == d.font_scale);
    CHECK(s.seed == d.seed);
    CHECK(s.layer == d.layer);
    CHECK(s.play_speed == d.play_speed);
    CHECK(s.cache == d.cache);
    CHECK(s.model == d.model);
    CHECK(s.log_time == d.log_time);
    CHECK(s.lesson_step == d.lesson_step);
    CHECK(s.theme == d.theme);
    CHECK(s.lesson == 3);  // good fields are kept
    CHECK(s.prompt == "kept as it is");
    REQUIRE(problems.size() == 14);
    CHECK(problems[0] ==
          "settings.txt:1: temperature: -5 is out of range (0..100); using the default");
    CHECK(problems[4] ==
          "settings.txt:5: backend: unknown backend 'quantum' (choose auto, cpu, cuda or "
          "cuda-emulated); using the default");
    CHECK(problems[10] == "settings.txt:11: model: needs a value; using the default");
    for (const auto& p : problems) {
        CHECK(p.find('\n') == std::string::npos);
        CHECK(p.find('\x1b') == std::string::npos);
    }
    // Saved and read back: nothing bad is written, so nothing is reported again.
    const auto dir = test::temp_dir("gui-settings-bad");
    const std::string path = (dir / "settings.txt").string();
    REQUIRE(save_settings(s, path) == "");
    std::vector<std::string> again;
    CHECK(load_settings(path, &again) == s);
    CHECK(again.empty());
    // A backend this machine does not have is refused like an unknown one.
    std::vector<std::string> cuda;
    const Settings c = parse_settings("backend = cuda\n", "s", &cuda);
    if (cuda_unavailable_reason().empty()) {
        CHECK(c.backend == "cuda");
    } else {
        CHECK(c.backend == "auto");
        REQUIRE(cuda.size() == 1);
        CHECK(cuda[0].rfind("s:1: backend: this machine has no cuda backend (", 0) == 0);
    }
    // Not a regular file: the defaults, said once, no hang.
    std::vector<std::string> dev;
    CHECK(load_settings("/dev/zero", &dev) == Settings());
    CHECK(dev.size() == 1);
    CHECK(load_settings(dir.string(), &dev) == Settings());
}

// The settings file is the window's command line remembered: each key is an option's name and
// its value passes the option's own rule, so the file refuses what kvscope --NAME refuses, in
// the same words.
TEST_CASE("settings and the command line check each option alike", "[gui][settings][options]") {
    const std::vector<cmdline::OptionSpec> window = window_options();
    int compared = 0;
    for (const cmdline::OptionSpec& o : settings_options()) {
        INFO(o.name);
        using Kind = cmdline::ValueRule::Kind;
        std::string bad;
        switch (o.value.kind) {
            case Kind::Whole:
                bad = std::to_string(static_cast<long>(o.value.hi) + 1);
                break;
            case Kind::Number:
                bad = "1e9";
                break;
            case Kind::Unsigned:
                bad = "-1";
                break;
            case Kind::OneOf:
            case Kind::Checked:
                bad = "quantum";
                break;
            case Kind::WholeList:
                bad = "1,x";
                break;
            case Kind::Text:
                continue;
        }
        std::vector<std::string> problems;
        const Settings s = parse_settings(o.name + " = " + bad + "\n", "f", &problems);
        CHECK(s == Settings());
        const std::string why = cmdline::value_problem(o.value, bad);
        REQUIRE(!why.empty());
        REQUIRE(problems.size() == 1);
        CHECK(problems[0] == "f:1: " + o.name + ": " + why + "; using the default");
        if (!cmdline::find_option(window, o.name)) continue;  // remembered only
        std::string arg = "--" + o.name, value = bad;
        char name[] = "kvscope";
        std::vector<char*> argv = {name, arg.data(), value.data()};
        try {
            parse_options(static_cast<int>(argv.size()), argv.data());
            FAIL("kvscope " + arg + " " + bad + " was taken");
        } catch (const Error& e) {
            CHECK(std::string(e.what()) == arg + ": " + why + " (see kvscope --help)");
        }
        ++compared;
    }
    CHECK(compared >= 14);  // theme ... lesson-step: every option the settings keep
}

// A settings file an older kvscope wrote: keys spelt with '_', the lesson step from 0, no lesson
// as lesson = 0, a model file as model = file with its path beside it. Read as it meant, without a
// problem, and rewritten in the options' words.
TEST_CASE("settings: the older file is read as it meant", "[gui][settings]") {
    const std::string older =
        "# kvscope settings (rewritten on exit)\ntheme = light\nfont_scale = 1.5\nmodel = file\n"
        "model_path = /models/tiny.gguf\nbackend = auto\ncache = compare\nprompt = Once upon a "
        "time # not a comment\nplay_speed = 2.5\nlayer = 2\nhead = 1\nweight_scale = log\n"
        "log_time = 0\ntemperature = 0.7\ntop_k = 5\ntop_p = 0.95\nseed = 7\nlang = zh\n"
        "lesson = 4\nlesson_step = 2\n";
    std::vector<std::string> problems;
    const Settings s = parse_settings(older, "settings.txt", &problems);
    INFO(joined(problems));
    CHECK(problems.empty());
    CHECK(s.theme == "light");
    CHECK(s.font_scale == 1.5f);
    CHECK(s.model == "file");
    CHECK(s.model_path == "/models/tiny.gguf");
    CHECK(s.cache == CacheView::Compare);
    CHECK(s.prompt == "Once upon a time # not a comment");
    CHECK(s.play_speed == 2.5f);
    CHECK(s.layer == 2);
    CHECK(s.head == 1);
    CHECK(s.weight_scale == "log");
    CHECK(!s.log_time);
    CHECK(s.temperature == 0.7f);
    CHECK(s.top_k == 5);
    CHECK(s.top_p == 0.95f);
    CHECK(s.seed == 7);
    CHECK(s.lang == "zh");
    CHECK(s.lesson == 4);
    CHECK(s.lesson_step == 2);
    const std::string text = settings_text(s);
    CHECK(text.find("model = /models/tiny.gguf\n") != std::string::npos);
    CHECK(text.find("font-scale = 1.5\n") != std::string::npos);
    CHECK(text.find("lesson-step = 3\n") != std::string::npos);  // from 1, as --lesson-step
    std::vector<std::string> again;
    CHECK(parse_settings(text, "again", &again) == s);
    CHECK(again.empty());
    // No lesson, a named model, no file opened yet: as the older kvscope wrote them.
    const Settings none = parse_settings(
        "# kvscope settings (rewritten on exit)\nmodel = toy\nmodel_path = \nlesson = 0\n"
        "lesson_step = 0\n",
        "s", &problems);
    CHECK(problems.empty());
    CHECK(none.model == "toy");
    CHECK(none.model_path.empty());
    CHECK(none.lesson == 0);
    const std::string none_text = settings_text(none);
    CHECK(none_text.find("\nlesson") == std::string::npos);  // no lesson open: no --lesson
    CHECK(none_text.find("\nmodel-path") == std::string::npos);
    // An older file's bad values are named as it spells them.
    parse_settings("lesson_step = -2\ntop_k = x\n", "old", &problems);
    REQUIRE(problems.size() == 2);
    CHECK(problems[0] == "old:1: lesson_step: -2 is out of range (0..998); using the default");
    CHECK(problems[1] == "old:2: top_k: 'x' is not a whole number; using the default");
}

TEST_CASE("font files: empty, junk, truncated and damaged ones are refused before ImGui",
          "[gui][fonts][reliability]") {
    CHECK(font_problem(nullptr, 0) == "the file is empty");
    std::vector<unsigned char> junk(4096);
    std::mt19937 rng(7);
    for (auto& b : junk) b = static_cast<unsigned char>(rng());
    CHECK(font_problem(junk.data(), junk.size()) ==
          "not a TrueType or OpenType font (no font header)");
    const auto dir = test::temp_dir("gui-fonts-check");
    test::write_file(dir / "empty.ttf", {});
    CHECK(read_font((dir / "empty.ttf").string()).problem ==
          (dir / "empty.ttf").string() + ": the file is empty");
    CHECK(read_font("/dev/zero").problem.find("not a regular file") != std::string::npos);
    for (const char* real : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                             "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"}) {
        if (!fs::exists(real)) continue;
        INFO(real);
        const FontBytes f = read_font(real);
        REQUIRE(f.problem == "");
        const auto& b = f.bytes;
        // Cut short: refused (a table or the directory lies beyond the end). (The last bytes of
        // a collection may belong to its other fonts, so only cuts well inside are refused.)
        for (std::size_t n : {std::size_t(11), std::size_t(12), std::size_t(40), std::size_t(300),
                              b.size() / 3, b.size() / 2})
            CHECK(font_problem(b.data(), n) != "");
        // Damaged in the directory or a table: refused or accepted, never a crash (ASan).
        for (int trial = 0; trial < 300; ++trial) {
            std::vector<unsigned char> d = b;
            const std::size_t at = rng() % std::min<std::size_t>(d.size(), 1024);
            d[at] = static_cast<unsigned char>(rng());
            (void)font_problem(d.data(), d.size());
        }
    }
}

TEST_CASE("a model whose context is shorter than the prompt opens, says why, and still steps",
          "[gui][worker][reliability]") {
    const std::string model = test::write_tiny_model(test::temp_dir("gui-short-context"));
    std::string prompt;
    for (int i = 0; i < 80; ++i) prompt += "the cat ";  // far beyond the context of 64
    EngineWorker w;
    w.open_model(model, {}, {}, prompt);
    w.wait_idle();
    {
        auto lock = w.lock();
        const EngineSnapshot& s = w.snapshot();
        REQUIRE(s.model);                         // it did switch
        CHECK(s.error_task == EngineTask::None);  // not "could not open the model"
        CHECK(s.error.find("longer than the model's context of 64 tokens") != std::string::npos);
    }
    w.decode(2);
    w.wait_idle();
    auto lock = w.lock();
    const EngineSnapshot& s = w.snapshot();
    CHECK(s.error.empty());
    REQUIRE(s.sessions.size() == 1);
    CHECK(s.sessions[0].trace.steps().size() == 3);  // the step buttons work
}

TEST_CASE("quit signals: copies of one request are one, a repeat after the grace or a third ends",
          "[gui][reliability]") {
    CHECK_FALSE(quit_at_once(1, 0));  // the first: the frame loop ends, the settings are saved
    // timeout's SIGTERM to the window and to its group, microseconds apart; a double Ctrl+C.
    CHECK_FALSE(quit_at_once(2, 0));
    CHECK_FALSE(quit_at_once(2, kQuitGraceMs - 1));
    // A user who presses again once the grace has passed, or anyone's third signal.
    CHECK(quit_at_once(2, kQuitGraceMs));
    CHECK(quit_at_once(3, 0));
    CHECK(quit_at_once(7, 5));
}

TEST_CASE("settings: a byte order mark before the first setting is not part of its name",
          "[gui][settings][reliability]") {
    const fs::path path = test::temp_dir("settings-bom") / "settings.txt";
    const std::string text = "\xEF\xBB\xBFtemperature = 0.5\nlesson = 3\n";
    test::write_file(path, std::vector<unsigned char>(text.begin(), text.end()));
    std::vector<std::string> problems;
    const Settings s = load_settings(path.string(), &problems);
    CHECK(problems.empty());
    CHECK(s.temperature == 0.5f);
    CHECK(s.lesson == 3);
    // Read, it is still kvscope's own file to rewrite (not an input no output may replace).
    CHECK(save_settings(s, path.string()).empty());
}

// Read in part (the first 64 KiB), such a file lost the lines past the bound without a word and
// could take a value cut mid-way; and the window wrote a long prompt that made its own file such
// a one.
TEST_CASE("settings: a file past the bound is not read in part, the window writes none",
          "[gui][settings][reliability]") {
    const fs::path path = test::temp_dir("settings-long") / "settings.txt";
    const std::string text =
        "theme = light\nprompt = " + std::string(70000, 'a') + "\nfont-scale = 2\nlang = zh\n";
    test::write_file(path, std::vector<unsigned char>(text.begin(), text.end()));
    std::vector<std::string> problems;
    const Settings s = load_settings(path.string(), &problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == path.string() +
                             ": more than 64 KiB, more than a settings file of kvscope's holds; "
                             "using the default settings");
    CHECK(s.theme == Settings().theme);  // all defaults, none of the file taken in part
    CHECK(s.prompt == Settings().prompt);
    // What the window writes reads back whole: a prompt too long to keep is not remembered.
    Settings w;
    w.prompt = std::string(20000, 'b');
    w.font_scale = 2;
    CHECK(settings_text(w).size() < 64 * 1024);
    CHECK(settings_text(w).find("prompt = ") == std::string::npos);
    w.prompt = std::string(1000, 'c');
    problems.clear();
    const Settings back = parse_settings(settings_text(w), "settings.txt", &problems);
    CHECK(problems.empty());
    CHECK(back.prompt == w.prompt);
    CHECK(back.font_scale == 2);
}

TEST_CASE("settings: saved as UTF-16, one line says so and the defaults are used",
          "[gui][settings][reliability]") {
    std::vector<std::string> problems;
    const Settings s =
        parse_settings(std::string_view("\xFF\xFEt\0e\0m\0p\0", 10), "settings.txt", &problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] ==
          "settings.txt: UTF-16 text (it starts with a UTF-16 byte order mark); kvscope reads "
          "UTF-8: save it as UTF-8; using the default settings");
    CHECK(s.temperature == Settings().temperature);
}

TEST_CASE(
    "the window's outputs are known by kvscope's own headers: a screenshot's PNG text "
    "chunk or JPEG comment, the layout record's first key",
    "[gui][output]") {
    // A PNG as an encoder writes it: the signature, IHDR (13 bytes of data), IEND.
    std::string png = "\x89PNG\r\n\x1a\n";
    png += std::string("\0\0\0\x0dIHDR", 8) + std::string(13, '\1') + "crc!";
    png += std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12);
    const std::string marked = with_kvscope_text(png);
    // tEXt "Software\0kvscope" after IHDR, with PNG's CRC-32 of its type and data.
    REQUIRE(marked.size() == png.size() + 4 + 4 + 16 + 4);
    CHECK(marked.substr(33, 24) == std::string("\0\0\0\x10tEXtSoftware\0kvscope", 24));
    CHECK(marked.substr(57, 4) == "\x27\x49\xed\x13");  // zlib.crc32(b"tEXtSoftware\0kvscope")
    CHECK(screenshot_output().own(marked));
    CHECK_FALSE(screenshot_output().own(png));  // a PNG of the user's
    // A JPEG as stb writes it starts FF D8 then its first segment; kvscope's carries a comment
    // segment "kvscope" before it.
    const std::string jpeg("\xFF\xD8\xFF\xE0\x00\x10JFIF", 10);
    const std::string jmarked = with_kvscope_comment(jpeg);
    CHECK(jmarked == std::string("\xFF\xD8\xFF\xFE\x00\x09kvscope\xFF\xE0\x00\x10JFIF", 21));
    CHECK(jpeg_screenshot_output().own(jmarked));
    CHECK_FALSE(jpeg_screenshot_output().own(jpeg));  // a photo of the user's
    CHECK_FALSE(screenshot_output().own(jmarked));
    LayoutRecord r;
    CHECK(layout_json_output().own(r.to_json()));
    CHECK(layout_json_output().own(r.to_json(-1)));
    CHECK_FALSE(layout_json_output().own("{\"arrangement\": 1, \"kvscope_layout\": 1}"));
}

TEST_CASE(
    "window views: every field is read by the one reader, a bad value is one line, never an "
    "exception from a number",
    "[gui][options]") {
    const auto settings = read_view("maximise=inside,stage=3,explain=1:2:last,mask=bidirectional");
    REQUIRE(settings.size() == 4);
    CHECK(settings[0].panel == "inside");
    CHECK(settings[1].stage == 2);
    CHECK((settings[2].on && settings[2].layer == 1 && settings[2].head == 2 &&
           settings[2].row == -1));
    CHECK(settings[3].on);
    CHECK(read_view("explain=0:0:7")[0].row == 6);  // position 7: the query at index 6
    CHECK_FALSE(read_view("explain=off")[0].on);
    // Each of these once passed the check and made the window's apply_view throw from std::stoi
    // ("internal error: stoi", exit 1), or read a number sscanf wrapped.
    for (const std::string v : {"explain=0:0:abc", "explain=0:0:12345678901234", "explain=0:0:0",
                                "explain=99999999999:0:1", "explain=0:-1:1", "explain=0:0",
                                "explain=0:0: 5", "explain=0x1:0:1", "stage=15", "stage=08x",
                                "maximise=nowhere", "presenter=2", "bogus=1"}) {
        INFO(v);
        const std::string why = check_view(v);
        CHECK(why.starts_with("'" + v + "' in view '" + v + "' is not a view setting"));
        char name[] = "kvscope", views[] = "--views", layout[] = "--layout-json", file[] = "v.json";
        std::string value = v;
        std::vector<char*> argv = {name, layout, file, views, value.data()};
        CHECK_THROWS_WITH(parse_options(static_cast<int>(argv.size()), argv.data()),
                          "--views: " + why + " (see kvscope --help)");
    }
}

TEST_CASE(
    "a serving run that cannot start says why, and a later step repeats it, in the CLI's words",
    "[gui][worker][serving][reliability]") {
    const std::string model = test::write_tiny_model(test::temp_dir("gui-serve-why"));
    std::string long_prompt;
    for (int i = 0; i < 80; ++i) long_prompt += "the cat ";  // beyond the context of 64
    ServeSetup setup;
    setup.prompts = {"the cat", long_prompt};
    EngineWorker w;
    w.open_model(model, {}, {}, "the cat");
    w.serve_open(setup);
    w.wait_idle();
    const std::string why = "request 2: the prompt is";  // kvscope-cli serve's own message
    {
        auto lock = w.lock();
        const EngineSnapshot& s = w.snapshot();
        CHECK(s.error_task == EngineTask::ServeOpen);
        CHECK(s.error.find(why) == 0);
        CHECK(s.serving_error == s.error);  // kept for the Serving view
        CHECK_FALSE(s.serving);
    }
    w.serve_step(1);
    w.wait_idle();
    {
        auto lock = w.lock();
        const EngineSnapshot& s = w.snapshot();
        INFO(s.error);
        CHECK(s.error.find("no serving run is open: it could not start: " + why) == 0);
    }
    // A run that starts clears it.
    setup.prompts = {"the cat"};
    w.serve_open(setup);
    w.wait_idle();
    auto lock = w.lock();
    CHECK(w.snapshot().serving_error.empty());
    CHECK(w.snapshot().serving);
}
