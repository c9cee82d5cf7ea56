// Bad input on the window's data side, without a display: remembered settings checked field by
// field, font files checked before ImGui sees them, and a model whose context is shorter than the
// prompt. The same under a real window: test_gui_app.cpp.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

#include "core/util/error.h"
#include "gui/engine_worker.h"
#include "gui/font_check.h"
#include "gui/quit_signal.h"
#include "gui/settings.h"
#include "kernels/backend_factory.h"
#include "tests/test_helpers.h"

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
        "temperature = -5\ntop_k = -1\ntop_p = 2\nweight_scale = cubic\nbackend = quantum\n"
        "font_scale = nan\nseed = 1.5\nlayer = 99999999999\nplay_speed = inf\ncache = maybe\n"
        "model = ../../etc/passwd\nlog_time = yes\nlesson_step = -2\ntheme = \x1b[2Jpink\n"
        "lesson = 3\nprompt = kept as it is\nunknown_key = whatever\n";
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
          "settings.txt:1: temperature = -5 is not a number in 0..100; using the "
          "default");
    CHECK(problems[4] ==
          "settings.txt:5: backend = quantum is not one of auto, cpu, cuda; using the default");
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
        CHECK(cuda[0].rfind("s:1: backend = cuda is not a backend this machine has", 0) == 0);
    }
    // Not a regular file: the defaults, said once, no hang.
    std::vector<std::string> dev;
    CHECK(load_settings("/dev/zero", &dev) == Settings());
    CHECK(dev.size() == 1);
    CHECK(load_settings(dir.string(), &dev) == Settings());
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
