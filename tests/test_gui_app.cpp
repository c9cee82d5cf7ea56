// The kvscope window itself, run under Xvfb: screenshots decoded with stb_image and checked
// against where the app says it drew (--layout-json). After the prefill the attention heatmap
// is a lower triangle (cells above the diagonal are exactly the mask colour); one decode step
// adds exactly one row; the KV grid has one column per token. Plus the one-line failures.
#include <stb_image.h>
#include <sys/wait.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/loaders/model_loader.h"
#include "core/session/attention_explain.h"
#include "core/session/batch_session.h"
#include "core/session/session.h"
#include "kernels/cpu/cpu_backend.h"
#include "lessonlib/lesson.h"
#include "lessonlib/lesson_files.h"
#include "tests/hostile_files.h"
#include "tests/test_helpers.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using kvs::test::quote;
using kvs::test::slurp;

struct Run {
    int exit_code = -1;
    std::string out, err;
};

// A virtual display that did not start (tests/with-xvfb.sh says so and exits 125) is not the
// app's failure: the run is retried.
bool xvfb_trouble(const std::string& err) {
    return err.find("with-xvfb: Xvfb did not start") != std::string::npos;
}

// `env` is a prefix such as "env -u DISPLAY"; `xvfb` runs the app on a virtual display.
Run run_app(const std::vector<std::string>& args, bool xvfb = true, const std::string& env = {}) {
    const fs::path dir = kvs::test::temp_dir("gui-run");
    std::string cmd = env.empty() ? "" : env + " ";
    if (xvfb) cmd.append(quote(KVSCOPE_WITH_XVFB)).append(" ");
    cmd += quote(KVSCOPE_GUI_BIN);
    for (const auto& a : args) cmd.append(" ").append(quote(a));
    cmd.append(" >").append(quote((dir / "out").string()));
    cmd.append(" 2>").append(quote((dir / "err").string()));
    Run r;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const int status = std::system(cmd.c_str());
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = slurp(dir / "out");
        r.err = slurp(dir / "err");
        if (!xvfb || !xvfb_trouble(r.err)) break;
    }
    return r;
}

// The start of every xdotool script: run the window (the script's arguments) in the background,
// wait until it has mapped, give it a moment to draw, and focus it.
constexpr const char* kStartWindowAndFocus = R"(set -u
"$@" & pid=$!
wid=""
for i in $(seq 200); do
  wid=$(xdotool search --name '^kvscope$' 2>/dev/null | head -1); [ -n "$wid" ] && break; sleep 0.1
done
[ -z "$wid" ] && { kill $pid; exit 3; }
sleep 1.5
xdotool windowfocus --sync "$wid"
)";

// A script that drives the window with xdotool, run in `dir` (stdout and stderr to dir/out and
// dir/err). `fresh` puts the folder back as the test wants it before each try. A try whose
// virtual display did not start is repeated; so, once, is a run whose settings file (written by
// the window as it closes) lacks `expect`: keys are paced by sleeps, and on a loaded machine a
// press can come before the window is ready for it. A fault that repeats still fails the test.
int drive_window(const std::string& cmd, const fs::path& dir, const std::function<void()>& fresh,
                 const std::string& expect) {
    int status = -1;
    for (int run = 0; run < 2; ++run) {
        for (int attempt = 0; attempt < 3; ++attempt) {
            fresh();
            status = std::system(cmd.c_str());
            if (!xvfb_trouble(slurp(dir / "err"))) break;
        }
        if (slurp(dir / "cfg" / "settings.txt").find(expect) != std::string::npos) break;
    }
    return status;
}

struct Image {
    int w = 0, h = 0;
    std::vector<unsigned char> px;
    std::array<int, 3> at(double x, double y) const {
        const int ix = static_cast<int>(x), iy = static_cast<int>(y);
        REQUIRE(ix >= 0);
        REQUIRE(iy >= 0);
        REQUIRE(ix < w);
        REQUIRE(iy < h);
        const unsigned char* p = &px[(std::size_t(iy) * w + ix) * 3];
        return {p[0], p[1], p[2]};
    }
};

Image load_png(const std::string& path) {
    Image im;
    int comp = 0;
    unsigned char* data = stbi_load(path.c_str(), &im.w, &im.h, &comp, 3);
    REQUIRE(data != nullptr);
    im.px.assign(data, data + std::size_t(im.w) * im.h * 3);
    stbi_image_free(data);
    return im;
}

std::array<int, 3> rgb(const json& j) {
    return {j[0].get<int>(), j[1].get<int>(), j[2].get<int>()};
}

struct Shot {
    Image image;
    json layout;
    fs::path dir;  // s.png, s.json and --views' s-N.json
};

// Renders the tiny synthetic model (always available) after `steps` and loads both outputs.
Shot screenshot(const std::vector<std::string>& extra, const std::string& tag) {
    const fs::path dir = kvs::test::temp_dir("gui-shot-" + tag);
    std::vector<std::string> args = {"--screenshot",  (dir / "s.png").string(),
                                     "--layout-json", (dir / "s.json").string(),
                                     "--size",        "1280x800"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Run r = run_app(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    Shot s;
    s.dir = dir;
    s.image = load_png((dir / "s.png").string());
    s.layout = json::parse(slurp(dir / "s.json"));
    return s;
}

const json& main_heatmap(const json& layout, int index = 0) {
    int seen = 0;
    for (const auto& h : layout.at("heatmaps"))
        if (h.at("main").get<bool>() && seen++ == index) return h;
    FAIL("no main heatmap in the layout");
    static json none;
    return none;
}

// Centre of cell (q, k) of an n x n heatmap drawn in `rect`.
std::pair<double, double> cell_centre(const json& rect, int n, int q, int k) {
    const double x = rect.at("x").get<double>(), y = rect.at("y").get<double>();
    const double w = rect.at("w").get<double>(), h = rect.at("h").get<double>();
    return {x + (k + 0.5) * w / n, y + (q + 0.5) * h / n};
}

std::string tiny_model() {
    static const std::string p = kvs::test::write_tiny_model(kvs::test::temp_dir("gui-app-model"));
    return p;
}

// The tiny model with a prompt of several tokens, head (1, 2) shown large, and `more`.
std::vector<std::string> tiny_with(const std::vector<std::string>& more) {
    std::vector<std::string> a = {"--model",   tiny_model(), "--prompt", "the cat sat in the hat",
                                  "--backend", "cpu",        "--layer",  "1",
                                  "--head",    "2"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

}  // namespace

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

TEST_CASE("the window's failures are one line and exit code 2", "[gui][errors]") {
    SECTION("no display points to kvscope-cli") {
        const Run r = run_app({"--model", "toy"}, false, "env -u DISPLAY -u WAYLAND_DISPLAY");
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("kvscope-cli") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    SECTION("OpenGL older than 3.3") {
        const Run r = run_app({"--model", "toy", "--screenshot", "/dev/null"}, true,
                              "env MESA_GL_VERSION_OVERRIDE=3.0");
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("OpenGL 3.3") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    SECTION("bad options") {
        for (const auto& args : std::vector<std::vector<std::string>>{
                 {"--bogus"}, {"--cache", "sometimes"}, {"--decode", "x"}, {"--size", "1x1"}}) {
            const Run r = run_app(args, false);
            CHECK(r.exit_code == 2);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
    }
    SECTION("a model that does not open") {
        const Run r = run_app({"--model", "/no/such/model.bin", "--screenshot", "/dev/null"});
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("/no/such/model.bin") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

TEST_CASE("headless runs leave the user settings alone and --frame-stats reports frame times",
          "[gui][settings]") {
    const fs::path home = kvs::test::temp_dir("gui-home");
    const std::string env = "env HOME=" + quote(home.string()) +
                            " XDG_CONFIG_HOME=" + quote((home / "xdg").string()) +
                            " KVSCOPE_CONFIG_DIR=" + quote((home / "cfg").string());
    const Run r = run_app({"--model", "toy", "--prefill", "--frame-stats", "5"}, true, env);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("frame time over 5 frames: min ") != std::string::npos);
    CHECK(r.out.find("median") != std::string::npos);
    // No settings file, no imgui.ini, not even their folders.
    CHECK_FALSE(fs::exists(home / "cfg"));
    CHECK_FALSE(fs::exists(home / "xdg" / "kvscope"));
    CHECK_FALSE(fs::exists(home / ".config" / "kvscope"));
    CHECK_FALSE(fs::exists(fs::current_path() / "imgui.ini"));
}

TEST_CASE("keys drive the window and typing in the prompt is not taken as keys", "[gui][keys]") {
    // xdotool (a test package) types into the window on Xvfb like a student would.
    REQUIRE(std::system("command -v xdotool >/dev/null") == 0);
    const fs::path dir = kvs::test::temp_dir("gui-keys");
    const fs::path script = dir / "drive.sh";
    {
        std::ofstream f(script);
        f << kStartWindowAndFocus
          << R"(# Space: prefill, Space: one decode step, c: cache off, t: light theme, Ctrl+S: a PNG here.
for k in space space c t ctrl+s; do xdotool key $k; sleep 0.5; done
# Into the prompt field: these letters are text, not the t (theme) and r (reset) keys.
xdotool mousemove $PROMPT_X $PROMPT_Y click 1; sleep 0.4
xdotool type --delay 100 " t r"; sleep 0.3
xdotool key Return; sleep 0.5
# Out of the field again (an empty corner), then '=' makes the text larger.
xdotool mousemove 8 792 click 1; sleep 0.4
xdotool key equal; sleep 0.6
kill -TERM $pid; wait $pid
)";
    }
    // Not a first run (that would open lesson 1 beside the panels): the lesson panel is shut.
    const auto write_settings = [&] {
        fs::create_directories(dir / "cfg");
        std::ofstream(dir / "cfg" / "settings.txt") << "# no lesson open\n";
    };
    write_settings();
    // Where the prompt field is: the same window drawn headless says (the toolbar's height
    // depends on how long the backend's note is on this machine).
    const Shot where = screenshot(
        {"--model", tiny_model(), "--prompt", "the cat sat", "--prefill", "--decode", "1"},
        "keys-where");
    const json& field = where.layout.at("panels").at("prompt_field");
    const int px =
        static_cast<int>(field.at("x").get<double>() + field.at("w").get<double>() * 0.5);
    const int py =
        static_cast<int>(field.at("y").get<double>() + field.at("h").get<double>() * 0.5);
    const std::string env = "KVSCOPE_CONFIG_DIR=" + quote((dir / "cfg").string()) +
                            " PROMPT_X=" + std::to_string(px) + " PROMPT_Y=" + std::to_string(py);
    const std::string cmd = "cd " + quote(dir.string()) + " && " + env + " " +
                            quote(KVSCOPE_WITH_XVFB) + " bash " + quote(script.string()) + " " +
                            quote(KVSCOPE_GUI_BIN) + " --model " + quote(tiny_model()) +
                            " --prompt 'the cat sat' >out 2>err";
    const int status = drive_window(
        cmd, dir,
        [&] {
            for (const auto& e : fs::directory_iterator(dir))
                if (e.path().extension() == ".png") fs::remove(e.path());
            fs::remove_all(dir / "cfg");
            write_settings();
        },
        "prompt = the cat sat t r\n");
    INFO(slurp(dir / "err"));
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // SIGTERM ends the loop like closing the window
    // Ctrl+S saved the window.
    int pngs = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".png" &&
            e.path().filename().string().rfind("kvscope-", 0) == 0) {
            ++pngs;
            CHECK(load_png(e.path().string()).w == 1280);
        }
    CHECK(pngs == 1);
    // The settings saved on exit record what the keys did.
    const std::string settings = slurp(dir / "cfg" / "settings.txt");
    CHECK(settings.find("cache = off\n") != std::string::npos);
    CHECK(settings.find("theme = light\n") != std::string::npos);  // t typed as text: no toggle
    CHECK(settings.find("font-scale = 1.125\n") != std::string::npos);
    CHECK(settings.find("prompt = the cat sat t r\n") != std::string::npos);
    CHECK(fs::exists(dir / "cfg" / "imgui.ini"));
}

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

// --- Bad input in the window ---

TEST_CASE("a file that does not open shows why and the session goes on", "[gui][errors]") {
    const fs::path dir = kvs::test::temp_dir("gui-bad-files");
    const fs::path tiny = tiny_model();
    const fs::path tiny_dir = tiny.parent_path();
    // Truncated: the header promises more than the file holds (its tokenizer beside it).
    std::string bytes = slurp(tiny);
    kvs::test::write_file(dir / "cut.bin", {bytes.begin(), bytes.begin() + 100});
    fs::copy_file(tiny_dir / "tiny.tok.bin", dir / "cut.tok.bin");
    // Foreign: a PNG where a checkpoint should be.
    fs::copy_file(fs::path(KVSCOPE_SOURCE_DIR) / "docs" / "screenshots" / "toy.png",
                  dir / "picture.bin");
    fs::copy_file(tiny_dir / "tiny.tok.bin", dir / "picture.tok.bin");
    // Wrong tokenizer: the model's vocabulary is 300, this tokenizer has 50.
    fs::copy_file(tiny, dir / "mismatch.bin");
    kvs::test::write_file(dir / "mismatch.tok.bin", kvs::test::synthetic_tokenizer({}, 50));
    fs::create_directories(dir / "a folder");
    for (const std::string name : {"cut.bin", "picture.bin", "mismatch.bin", "a folder"}) {
        INFO(name);
        const std::string path = (dir / name).string();
        const Shot s = screenshot({"--model", "toy", "--prefill", "--open", path}, "bad");
        CHECK(s.layout.at("model") == "toy");  // still the toy, prefilled, its tokens shown
        CHECK(s.layout.at("steps") == 1);
        CHECK(s.layout.at("tokens") == json({"Today", "weather", "is", "so", "nice"}));
        REQUIRE(s.layout.at("messages").size() == 1);
        const std::string m = s.layout.at("messages").at(0);
        CHECK(m.rfind("could not open the model: ", 0) == 0);
        CHECK(m.find(fs::path(name).stem().string()) != std::string::npos);
        CHECK(m.find("(still showing toy)") != std::string::npos);
        CHECK(m.find('\n') == std::string::npos);
    }
}

TEST_CASE("hostile model folders through Open file: one line each, the session goes on",
          "[gui][errors][reliability]") {
    // The classes of tests/test_hostile_input.cpp as the window meets them (--open does what
    // Open file... does): a tokenizer.json id that, unchecked, writes past a vector, and one the
    // standard library refuses ("internal error"), JSON a hundred thousand deep (recursing over
    // it overflows the stack and takes the window and the user's session with it), a config
    // whose fields multiply past 2^31, a shard name with a NUL inside, a right-to-left override
    // in a config value.
    namespace t = kvs::test;
    const fs::path dir = t::temp_dir("gui-hostile");
    const std::string deep = t::nested_json(100000);
    const std::string model = (dir / "m.bin").string();
    REQUIRE(t::run_cli({"make-model", "--out", model, "--dim", "64", "--hidden", "64", "--layers",
                        "1", "--heads", "8", "--vocab", "300", "--seq-len", "16"})
                .exit_code == 0);
    REQUIRE(t::run_cli({"export", "--model", model, "--hf", (dir / "wide").string()}).exit_code ==
            0);
    auto wide = json::parse(slurp(dir / "wide" / "config.json"));
    wide["head_dim"] = (1 << 29) + 8;
    const std::string wrap_config = wide.dump();
    t::write_file(dir / "wide" / "config.json", {wrap_config.begin(), wrap_config.end()});
    struct Case {
        fs::path folder;
        std::string says;
    };
    const std::vector<Case> cases = {
        {t::hf_folder_with(
             dir, "neg",
             {{"tokenizer.bin", ""}, {"tokenizer.json", t::tokenizer_json_with_added_id("-1")}}),
         "added_tokens[0].id = -1 is not a token id"},
        {t::hf_folder_with(
             dir, "min",
             {{"tokenizer.bin", ""},
              {"tokenizer.json", t::tokenizer_json_with_added_id("-9223372036854775808")}}),
         "added_tokens[0].id = -9223372036854775808 is not a token id"},
        {t::hf_folder_with(dir, "deep", {{"config.json", t::config_with("hidden_act", deep)}}),
         "config.json: JSON nested more than 64 levels deep"},
        {dir / "wide", "head_dim 536870920 x 8 heads is 4294967360, not hidden_size 64"},
        {t::hf_folder_with(
             dir, "nul",
             {{"model.safetensors.index.json", t::index_naming("model.safetensors\\u0000evil")}}),
         "(a NUL byte inside)"},
        {t::hf_folder_with(
             dir, "bidi",
             {{"config.json", t::config_with("architectures", "[\"Llama\\u202eX\"]")}}),
         "architecture 'Llama\\u202eX' is not supported"},
    };
    for (const Case& c : cases) {
        INFO(c.folder.filename().string());
        const Shot s =
            screenshot({"--model", "toy", "--prefill", "--open", c.folder.string()}, "hostile");
        CHECK(s.layout.at("model") == "toy");  // still the toy, prefilled
        CHECK(s.layout.at("steps") == 1);
        REQUIRE(s.layout.at("messages").size() == 1);
        const std::string m = s.layout.at("messages").at(0);
        INFO(m);
        CHECK(m.rfind("could not open the model: " + c.folder.string(), 0) == 0);
        CHECK(m.find(c.says) != std::string::npos);
        CHECK(m.find("(still showing toy)") != std::string::npos);
        CHECK(m.find("internal error") == std::string::npos);
        CHECK(m.find('\n') == std::string::npos);
    }
}

TEST_CASE("any UTF-8 in the prompt: bytes the vocabulary lacks are chips of their own",
          "[gui][errors][utf8]") {
    // The tiny model's vocabulary has byte pieces and a few English ones: an emoji, Chinese and
    // control characters all go through byte fallback.
    const Shot s = screenshot({"--model", tiny_model(), "--backend", "cpu", "--prompt",
                               "a\xF0\x9F\x98\x80\xE4\xBD\xA0\x01\t\x7F", "--prefill"},
                              "utf8");
    CHECK(s.layout.at("messages").empty());
    CHECK(s.layout.at("tokens") ==
          json({"<s>",
                "\xC2\xB7"
                "a",
                "<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "<0xE4>", "<0xBD>", "<0xA0>", "<0x01>",
                "<0x09>", "<0x7F>", s.layout.at("tokens").back()}));
    CHECK(main_heatmap(s.layout).at("n") == 12);
}

TEST_CASE("a prompt longer than the context is refused with the limit, the old one stays",
          "[gui][errors]") {
    std::string words;
    for (int i = 0; i < 80; ++i) words += " the";
    const Shot s = screenshot(tiny_with({"--prefill", "--then-prompt", words}), "long");
    REQUIRE(s.layout.at("messages").size() == 1);
    const std::string m = s.layout.at("messages").at(0);
    CHECK(m.find("longer than the model's context of 64 tokens") != std::string::npos);
    // The old prompt and its prefill are still shown.
    const Shot before = screenshot(tiny_with({"--prefill"}), "long-before");
    CHECK(s.layout.at("steps") == 1);
    CHECK(s.layout.at("tokens") == before.layout.at("tokens"));
}

TEST_CASE("reaching the end of the context ends generation with a message", "[gui][errors]") {
    const Shot s = screenshot(tiny_with({"--decode", "200"}), "full");
    CHECK(s.layout.at("steps").get<int>() < 200);
    CHECK(s.layout.at("finish") == "finished: the context of 64 tokens is full");
    REQUIRE(s.layout.at("messages").size() == 1);
    CHECK(s.layout.at("messages").at(0) == "Generation ended: the context of 64 tokens is full.");
    CHECK(main_heatmap(s.layout).at("n") == 64);
}

TEST_CASE("without its fonts the window falls back and says so", "[gui][errors][fonts]") {
    SECTION("no fonts at all: ImGui's own font, in English") {
        const fs::path empty = kvs::test::temp_dir("gui-no-fonts");
        const std::string env = "env KVSCOPE_FONTS=" + quote(empty.string());
        const fs::path dir = kvs::test::temp_dir("gui-no-fonts-shot");
        const Run r =
            run_app({"--model", "toy", "--prefill", "--lang", "zh", "--screenshot",
                     (dir / "s.png").string(), "--layout-json", (dir / "s.json").string()},
                    true, env);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const json l = json::parse(slurp(dir / "s.json"));
        CHECK(l.at("fonts").at("dejavu") == false);
        CHECK(l.at("lang") == "en");
        REQUIRE(l.at("messages").size() == 1);
        CHECK(l.at("messages").at(0).get<std::string>().rfind("DejaVu Sans not found", 0) == 0);
        CHECK(l.at("tokens").size() == 5);
    }
    SECTION("DejaVu without the Chinese font: English, with a notice") {
        const fs::path only = kvs::test::temp_dir("gui-dejavu-only");
        fs::create_symlink("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                           only / "DejaVuSans.ttf");
        const std::string env = "env KVSCOPE_FONTS=" + quote(only.string());
        const fs::path dir = kvs::test::temp_dir("gui-dejavu-only-shot");
        const Run r =
            run_app({"--lesson", "1", "--lang", "zh", "--screenshot", (dir / "s.png").string(),
                     "--layout-json", (dir / "s.json").string()},
                    true, env);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const json l = json::parse(slurp(dir / "s.json"));
        CHECK(l.at("fonts").at("dejavu") == true);
        CHECK(l.at("fonts").at("chinese") == false);
        CHECK(l.at("lang") == "en");
        CHECK(l.at("lesson").at("title") == kvs::load_lesson(kvs::find_lesson("1", "en")).title);
        REQUIRE(l.at("messages").size() == 1);
        CHECK(l.at("messages").at(0).get<std::string>().find("fonts-wqy-microhei") !=
              std::string::npos);
    }
}

TEST_CASE("resident memory stays flat over a long session of resets and decodes", "[gui][soak]") {
    // 600 decode steps of the tiny model (context 64): about 15 runs to the end of the context,
    // each from a reset with a new prompt, a frame drawn after every step.
    const Run r = run_app({"--model", tiny_model(), "--backend", "cpu", "--soak-steps", "600",
                           "--soak-report", "50"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("soak: 600 decode steps in ") != std::string::npos);
    const auto at = r.out.find("(spread ");
    REQUIRE(at != std::string::npos);
    const double spread = std::stod(r.out.substr(at + 8));
    CHECK(spread < 2.0);  // MiB, over the samples after the first run to the end
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

namespace {

// The texts a panel recorded (--layout-json), in drawing order.
std::vector<json> panel_texts(const json& layout, const std::string& panel) {
    std::vector<json> out;
    for (const auto& t : layout.at("texts"))
        if (t.at("panel") == panel) out.push_back(t);
    return out;
}

bool has_text(const json& layout, const std::string& panel, const std::string& text) {
    for (const auto& t : panel_texts(layout, panel))
        if (t.at("text") == text) return true;
    return false;
}

// Whether a recorded line of `panel` holds `part`: texts drawn one after another on a line are
// recorded as one run (gui/draw/text_record.h), so the formula's parts are pieces of one line.
bool line_has(const json& layout, const std::string& panel, const std::string& part) {
    for (const auto& t : panel_texts(layout, panel))
        if (t.at("text").get<std::string>().find(part) != std::string::npos) return true;
    return false;
}

// The numbers drawn in the inside-attention diagram's column headed `header`, top to bottom.
std::vector<std::string> column_texts(const json& layout, const std::string& header,
                                      const std::string& panel = "inside_attention") {
    const auto texts = panel_texts(layout, panel);
    double x = -1, y = -1;
    for (const auto& t : texts)
        if (t.at("text") == header) {
            x = t.at("rect").at("x").get<double>();
            y = t.at("rect").at("y").get<double>();
        }
    REQUIRE(x >= 0);
    std::vector<std::pair<double, std::string>> col;
    for (const auto& t : texts) {
        const double tx = t.at("rect").at("x").get<double>(),
                     ty = t.at("rect").at("y").get<double>();
        // Numbers sit a fraction of the font in from the column's left edge.
        if (tx >= x && tx < x + 8 && ty > y + 1 && t.at("text").get<std::string>().find('[') != 0)
            col.emplace_back(ty, t.at("text").get<std::string>());
    }
    std::sort(col.begin(), col.end());
    std::vector<std::string> out;
    for (const auto& [ty, s] : col) out.push_back(s);
    return out;
}

}  // namespace

TEST_CASE("broken font files fall back with a message instead of crashing the window",
          "[gui][errors][fonts][reliability]") {
    const std::string dejavu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
    const std::string real = slurp(dejavu);
    REQUIRE(!real.empty());
    struct Case {
        const char* what;
        std::string bytes;
    };
    const std::vector<Case> cases = {{"empty", ""},
                                     {"junk", std::string(5000, '\x5a')},
                                     {"truncated", real.substr(0, real.size() / 2)}};
    for (const auto& c : cases) {
        INFO(c.what);
        const fs::path fonts = kvs::test::temp_dir("gui-broken-fonts");
        // The main font and the Chinese one both broken, the same way.
        for (const char* name : {"DejaVuSans.ttf", "wqy-microhei.ttc", "DejaVuSansMono.ttf"})
            kvs::test::write_file(fonts / name,
                                  std::vector<unsigned char>(c.bytes.begin(), c.bytes.end()));
        const fs::path dir = kvs::test::temp_dir("gui-broken-fonts-shot");
        const Run r =
            run_app({"--model", "toy", "--prefill", "--screenshot", (dir / "s.png").string(),
                     "--layout-json", (dir / "s.json").string()},
                    true, "env KVSCOPE_FONTS=" + quote(fonts.string()));
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.err.find("font file refused (" + (fonts / "DejaVuSans.ttf").string()) !=
              std::string::npos);
        const json l = json::parse(slurp(dir / "s.json"));
        CHECK(l.at("fonts").at("dejavu") == false);
        REQUIRE(l.at("messages").size() >= 1);
        CHECK(l.at("messages").at(0).get<std::string>().rfind("font file refused", 0) == 0);
    }
}

TEST_CASE("the window's outputs: never over an input, errors reported, no empty names",
          "[gui][errors][reliability]") {
    const fs::path dir = kvs::test::temp_dir("gui-outputs");
    const std::string model = kvs::test::write_tiny_model(dir);
    const std::string before = slurp(model);
    for (const std::string& target : {model, model.substr(0, model.size() - 4) + ".tok.bin"}) {
        const Run r = run_app({"--model", model, "--screenshot", target});
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("is an input of this run") != std::string::npos);
    }
    CHECK(slurp(model) == before);
    const Run full = run_app({"--model", "toy", "--screenshot", "/dev/full"});
    CHECK(full.exit_code == 2);
    CHECK(full.err == "kvscope: error: /dev/full: write failed: No space left on device\n");
    const Run layout = run_app(
        {"--model", "toy", "--screenshot", (dir / "s.png").string(), "--layout-json", "/dev/full"});
    CHECK(layout.exit_code == 2);
    // `--screenshot ""` (an unset variable) is an error, not an interactive window.
    for (const std::string opt : {"--screenshot", "--model", "--layout-json", "--open"}) {
        const Run r = run_app({opt, ""}, false);
        CHECK(r.exit_code == 2);
        CHECK(r.err == "kvscope: error: " + opt +
                           " needs a value, not an empty string (see kvscope --help)\n");
    }
}

TEST_CASE("SIGTERM during a long @batch: the window saves its checked settings and exits",
          "[gui][errors][reliability]") {
    const fs::path dir = kvs::test::temp_dir("gui-sigterm");
    // A lessons folder of one lesson whose sweep runs for a long while (within the bound).
    const std::string lesson =
        "# Slow\n\n## Sweep\n\n@model default\n@batch sizes=8,8,8,8,8,8,8,8 decode=200 repeats=12 "
        "prompts=\"Once upon a time\"\n";
    for (const char* lang : {"en", "zh"}) {
        fs::create_directories(dir / "lessons" / lang);
        kvs::test::write_file(dir / "lessons" / lang / "01-slow.md",
                              std::vector<unsigned char>(lesson.begin(), lesson.end()));
    }
    fs::create_directories(dir / "cfg");
    const std::string bad = "temperature = -5\nbackend = quantum\ntop-p = 7\nlesson = 1\n";
    kvs::test::write_file(dir / "cfg" / "settings.txt",
                          std::vector<unsigned char>(bad.begin(), bad.end()));
    {
        std::ofstream f(dir / "drive.sh");
        f << R"SH(set -u
"$@" & pid=$!
sleep 4
start=$(date +%s%N)
kill -TERM $pid; wait $pid; rc=$?
echo "$rc $(( ($(date +%s%N) - start) / 1000000 ))" > result
)SH";
    }
    const std::string cmd =
        "cd " + quote(dir.string()) + " && KVSCOPE_LESSONS=" + quote((dir / "lessons").string()) +
        " KVSCOPE_CONFIG_DIR=" + quote((dir / "cfg").string()) + " " + quote(KVSCOPE_WITH_XVFB) +
        " bash drive.sh " + quote(KVSCOPE_GUI_BIN) + " >out 2>err";
    REQUIRE(std::system(cmd.c_str()) == 0);
    INFO(slurp(dir / "err"));
    int rc = -1, ms = -1;
    std::istringstream(slurp(dir / "result")) >> rc >> ms;
    CHECK(rc == 0);
    CHECK(ms < 3000);  // the sweep stops between forward passes
    const std::string settings = slurp(dir / "cfg" / "settings.txt");
    CHECK(settings.find("temperature = 0\n") != std::string::npos);
    CHECK(settings.find("backend = auto\n") != std::string::npos);
    CHECK(settings.find("top-p = 0.9\n") != std::string::npos);
    CHECK(settings.find("lesson = 1\n") != std::string::npos);
    const std::string err = slurp(dir / "err");
    CHECK(err.find("settings.txt:1: temperature: -5 is out of range (0..100); using the default") !=
          std::string::npos);
}

TEST_CASE("quit signals: timeout, SIGTERM to the window and its group, Ctrl+C twice all save",
          "[gui][errors][reliability]") {
    // GNU timeout sends SIGTERM to the window and then to its process group; a terminal's Ctrl+C
    // goes to the group, and a user presses it twice. Each is one request to quit: the window ends
    // through its normal path and saves its settings (exit 0). A handler reset after the first
    // signal (SA_RESETHAND) lets the second copy kill it unsaved (143, 130): every Ctrl+C-twice
    // run and about one timeout run in three. A user's later repeat, or a third signal, still
    // ends it at once (gui/app/quit_signal.h; the rule is tested in test_gui_reliability.cpp).
    const fs::path dir = kvs::test::temp_dir("gui-signals");
    {
        std::ofstream f(dir / "drive.sh");
        f << R"SH(set -u
gui=$1; model=$2
export KVSCOPE_CONFIG_DIR="$PWD/cfg"
one() {  # one LABEL COMMAND...: fresh settings, the run, its exit status, whether it saved
  local label=$1; shift
  rm -rf cfg; mkdir cfg; echo "lesson = 0" > cfg/settings.txt
  "$@" >>log 2>&1; local rc=$?
  grep -qx "prompt = signal test" cfg/settings.txt && s=saved || s=unsaved
  echo "$label $rc $s" >> result
}
run='"$0" --model "$1" --prompt "signal test" --backend cpu'
for i in 1 2 3 4; do
  one timeout timeout --preserve-status 0.8 "$gui" --model "$model" --prompt "signal test" --backend cpu
done
for i in 1 2; do
  one term-both bash -c "setsid $run & p=\$!; sleep 0.8; kill -TERM \$p; kill -TERM -- -\$p; wait \$p" "$gui" "$model"
  one ctrl-c-twice bash -c "setsid $run & p=\$!; sleep 0.8; kill -INT -- -\$p; sleep 0.3; kill -INT -- -\$p; wait \$p" "$gui" "$model"
done
)SH";
    }
    const std::string cmd = "cd " + quote(dir.string()) + " && " + quote(KVSCOPE_WITH_XVFB) +
                            " bash drive.sh " + quote(KVSCOPE_GUI_BIN) + " " + quote(tiny_model()) +
                            " >out 2>err";
    std::system(cmd.c_str());
    INFO(slurp(dir / "err") << slurp(dir / "log"));
    std::istringstream in(slurp(dir / "result"));
    int runs = 0;
    for (std::string label, saved; true; ++runs) {
        int rc = -1;
        if (!(in >> label >> rc >> saved)) break;
        INFO(label << " run " << runs << ": exit " << rc << ", " << saved);
        CHECK(rc == 0);
        CHECK(saved == "saved");
    }
    CHECK(runs == 8);
}

// --- No overlap, no clipping ---

namespace {

// Text rectangles of a --layout-json that overlap each other or are cut off by their panel
// (a table cell, a child window). Text of floating overlays is left out, and so is text cut at
// an edge its window scrolls past (cut at the top of a window that scrolls down, not cut at the
// right of it). Each problem is one line naming the texts.
std::vector<std::string> text_problems(const json& layout) {
    struct T {
        std::string panel, text;
        double x0, y0, x1, y1;
    };
    std::vector<T> shown;
    std::vector<std::string> problems;
    for (const auto& t : layout.at("texts")) {
        if (t.at("overlay").get<bool>()) continue;
        const json &r = t.at("rect"), &c = t.at("clip");
        const double x0 = std::max(r.at("x").get<double>(), c.at("x").get<double>());
        const double y0 = std::max(r.at("y").get<double>(), c.at("y").get<double>());
        const double x1 = std::min(r.at("x").get<double>() + r.at("w").get<double>(),
                                   c.at("x").get<double>() + c.at("w").get<double>());
        const double y1 = std::min(r.at("y").get<double>() + r.at("h").get<double>(),
                                   c.at("y").get<double>() + c.at("h").get<double>());
        const std::string panel = t.at("panel"), text = t.at("text");
        if ((t.at("clipped_x").get<bool>() && !t.at("scrolls_x").get<bool>()) ||
            (t.at("clipped_y").get<bool>() && !t.at("scrolls_y").get<bool>()))
            problems.push_back("clipped in " + panel + ": \"" + text + "\"");
        if (x1 > x0 && y1 > y0) shown.push_back({panel, text, x0, y0, x1, y1});
    }
    // Glyph boxes of neighbouring lines may touch; more than 2 px both ways is an overlap.
    for (std::size_t i = 0; i < shown.size(); ++i)
        for (std::size_t j = i + 1; j < shown.size(); ++j) {
            const T &a = shown[i], &b = shown[j];
            const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
            const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
            if (w > 2 && h > 2)
                problems.push_back("overlap: \"" + a.text + "\" (" + a.panel + ") and \"" + b.text +
                                   "\" (" + b.panel + ")");
        }
    return problems;
}

json text_item(const std::string& text, double x, double y, double w, double h,
               bool clipped_x = false, bool scrolls_y = false, bool clipped_y = false) {
    return {{"panel", "p"},
            {"text", text},
            {"rect", {{"x", x}, {"y", y}, {"w", w}, {"h", h}}},
            {"clip", {{"x", 0}, {"y", 0}, {"w", 500}, {"h", 500}}},
            {"clipped_x", clipped_x},
            {"clipped_y", clipped_y},
            {"scrolls_x", false},
            {"scrolls_y", scrolls_y},
            {"overlay", false},
            {"vertical", false}};
}

}  // namespace

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

struct StageConfig {
    std::string tag;
    std::vector<std::string> args;
};

// The window's configurations a class meets: 3 window sizes x 3 text sizes x English and
// Chinese x the toy and the default model x the cache on and compare x a lesson open and closed,
// all 144 (about a minute on two idle cores). KVSCOPE_STAGE_MATRIX=quick runs a covering subset
// of 18 instead: every window size with every text size, twice, and for the four two-way
// factors the rows of a 2^(4-1) design (each pair of them meets in all four combinations),
// cycled over the 9 size x text pairs. With a lesson open the lesson picks the model: lesson 1
// step 3 (the toy) or lesson 4 step 2 (the default model); its cache mode is the lesson's. The
// whole matrix is the default because the subset misses cases only it has: the KV panel squeezed
// to its title under the inside-attention band at 1920x1080, the what-if table's numbers cut in
// Chinese at 1280x800.
std::vector<StageConfig> stage_matrix() {
    // lang zh, default model, compare, lesson: the fourth is the parity of the other three.
    static const int design[8][4] = {{0, 0, 0, 0}, {0, 0, 1, 1}, {0, 1, 0, 1}, {0, 1, 1, 0},
                                     {1, 0, 0, 1}, {1, 0, 1, 0}, {1, 1, 0, 0}, {1, 1, 1, 1}};
    // All 144: 3 x 3 sizes, each with all 16 rows of the 2^4.
    const char* env = std::getenv("KVSCOPE_STAGE_MATRIX");
    const bool full = !(env && std::string(env) == "quick");
    int all[16][4];
    for (int i = 0; i < 16; ++i)
        for (int k = 0; k < 4; ++k) all[i][k] = (i >> k) & 1;
    std::vector<StageConfig> out;
    int row = 0;
    for (int rep = 0; rep < (full ? 16 : 2); ++rep)
        for (const char* size : {"1280x800", "1920x1080", "3840x2160"})
            for (const char* scale : {"1", "1.5", "2"}) {
                const int* d = full ? all[rep] : design[row++ % 8];
                const std::string lang = d[0] ? "zh" : "en", model = d[1] ? "default" : "toy";
                const std::string cache = d[2] ? "compare" : "on";
                StageConfig c;
                c.tag = std::string(size) + "-" + scale + "-" + lang + "-" + model + "-" + cache +
                        (d[3] ? "-lesson" : "");
                c.args = {"--size",  size,        "--font-scale", scale,     "--lang",
                          lang,      "--backend", "cpu",          "--model", model,
                          "--cache", cache,       "--decode",     "3"};
                if (d[3]) {
                    const bool toy = model == "toy";
                    c.args.insert(c.args.end(),
                                  {"--lesson", toy ? "1" : "4", "--lesson-step", toy ? "3" : "2"});
                }
                out.push_back(c);
            }
    out.push_back(
        {"1920x1080-1-en-lesson9",
         {"--size", "1920x1080", "--backend", "cpu", "--lesson", "9", "--lesson-step", "1"}});
    // Lesson 8's sweep on the stage with its batch's KV caches side by side.
    out.push_back(
        {"1280x800-1-en-lesson8",
         {"--size", "1280x800", "--backend", "cpu", "--lesson", "8", "--lesson-step", "1"}});
    out.push_back({"1920x1080-1.5-zh-lesson8",
                   {"--size", "1920x1080", "--font-scale", "1.5", "--lang", "zh", "--backend",
                    "cpu", "--lesson", "8", "--lesson-step", "1"}});
    // Lesson 2: the time panel brought forward beside the lesson at a laptop's size (where its plot
    // titles are the first thing to be cut), and its roofline on the stage.
    out.push_back(
        {"1280x800-1-en-lesson2-time",
         {"--size", "1280x800", "--backend", "cpu", "--lesson", "2", "--lesson-step", "5"}});
    out.push_back({"1280x800-1.5-zh-lesson2-roofline",
                   {"--size", "1280x800", "--font-scale", "1.5", "--lang", "zh", "--backend", "cpu",
                    "--lesson", "2", "--lesson-step", "6"}});
    // A lesson's question waiting, and answered, at a laptop's size with large text and at 1080p.
    out.push_back({"1280x800-2-en-lesson11-asking",
                   {"--size", "1280x800", "--font-scale", "2", "--backend", "cpu", "--lesson", "11",
                    "--answer", "wait"}});
    out.push_back({"1280x800-2-zh-lesson11-answered",
                   {"--size", "1280x800", "--font-scale", "2", "--lang", "zh", "--backend", "cpu",
                    "--lesson", "11", "--answer", "2"}});
    out.push_back({"1920x1080-2-zh-lesson11-asking",
                   {"--size", "1920x1080", "--font-scale", "2", "--lang", "zh", "--backend", "cpu",
                    "--lesson", "11", "--answer", "wait"}});
    // Lesson 10: causal and bidirectional side by side beside the lesson, every panel at a
    // laptop's size (the time table's longer session names), the attention panel alone at 1080p
    // with large Chinese text.
    out.push_back(
        {"1280x800-1-en-lesson10",
         {"--size", "1280x800", "--backend", "cpu", "--lesson", "10", "--lesson-step", "3"}});
    out.push_back({"1920x1080-2-zh-lesson10",
                   {"--size", "1920x1080", "--font-scale", "2", "--lang", "zh", "--backend", "cpu",
                    "--lesson", "10", "--lesson-step", "2"}});
    // The bands under the stage (inside attention, op strip) at each window size.
    out.push_back({"1280x800-1-en-toy-explain-ops",
                   {"--size", "1280x800", "--backend", "cpu", "--model", "toy", "--decode", "3",
                    "--explain", "0,0,last", "--ops"}});
    out.push_back({"1920x1080-1.5-zh-default-compare-explain-ops",
                   {"--size", "1920x1080", "--font-scale", "1.5", "--lang", "zh", "--backend",
                    "cpu", "--model", "default", "--cache", "compare", "--decode", "3", "--explain",
                    "1,0,last", "--ops", "--op", "24"}});
    out.push_back({"3840x2160-2-en-default-explain",
                   {"--size", "3840x2160", "--font-scale", "2", "--backend", "cpu", "--model",
                    "default", "--decode", "3", "--explain", "1,0,last"}});
    return out;
}

}  // namespace

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

TEST_CASE("no text overlaps another or is cut off, at every size, text size, language and mode",
          "[gui][overlap][matrix]") {
    // One virtual display for all of them, two windows at a time (the machine has two cores).
    const fs::path dir = kvs::test::temp_dir("gui-stage-matrix");
    const auto configs = stage_matrix();
    std::ofstream list(dir / "runs");
    for (const auto& c : configs) {
        std::string cmd = quote(KVSCOPE_GUI_BIN);
        for (const auto& a : c.args) cmd.append(" ").append(quote(a));
        const std::string base = (dir / c.tag).string();
        // The layout record only: a 4K PNG's compression takes a third of each run's time.
        cmd += " --layout-json " + quote(base + ".json") + " >" + quote(base + ".err") + " 2>&1";
        list << cmd << "\n";
    }
    list.close();
    const std::string script = "xargs -d '\\n' -P 2 -n 1 sh -c < " + quote((dir / "runs").string());
    Run r;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const std::string cmd = "KVSCOPE_XVFB_SCREEN=3840x2160x24 " + quote(KVSCOPE_WITH_XVFB) +
                                " sh -c " + quote(script) + " 2>" + quote((dir / "err").string());
        const int status = std::system(cmd.c_str());
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.err = slurp(dir / "err");
        if (!xvfb_trouble(r.err)) break;
    }
    INFO(r.err);
    int checked = 0;
    for (const auto& c : configs) {
        INFO(c.tag << ": " << slurp(dir / (c.tag + ".err")));
        REQUIRE(fs::exists(dir / (c.tag + ".json")));
        const json layout = json::parse(slurp(dir / (c.tag + ".json")));
        REQUIRE(layout.at("texts").size() > 20);
        for (const auto& p : text_problems(layout)) FAIL_CHECK(p);
        ++checked;
    }
    CHECK(checked == static_cast<int>(configs.size()));
}

namespace {

// The texts of the inside panel that are numbers (the diagram's cells).
std::vector<json> inside_numbers(const json& layout) {
    std::vector<json> out;
    for (const auto& t : panel_texts(layout, "inside_attention")) {
        const std::string x = t.at("text");
        if (!x.empty() && x.find_first_not_of("-0123456789.e+") == std::string::npos &&
            x.find_first_of("0123456789") != std::string::npos)
            out.push_back(t);
    }
    return out;
}

double main_heat_width(const json& layout) {
    for (const auto& h : layout.at("heatmaps"))
        if (h.at("main").get<bool>()) return h.at("rect").at("w").get<double>();
    return 0;
}

}  // namespace

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

TEST_CASE(
    "no text overlaps or is cut in the stage's views: every panel alone, every stage of "
    "the row, causal and bidirectional, at every size, text size and language",
    "[gui][overlap][matrix][stage]") {
    // One start of the window per size x text x language and model, several views each
    // (--views): each panel shown alone, the row's seven stages, the bidirectional view, the
    // inside panel alone at a stage; and on the toy with lesson 1 open, its table, the lesson
    // and the toy's row alone. Layout records only (no pixels drawn).
    const std::string views_default =
        "maximise=tokens;maximise=attention;maximise=kv;maximise=time;maximise=next;"
        "maximise=inside;maximise=ops;maximise=,stage=1;stage=2;stage=3;stage=4;stage=5;stage=6;"
        "stage=7;stage=all,mask=bidirectional;maximise=inside,stage=3";
    const std::string views_toy = "maximise=toy;maximise=lesson;maximise=inside;maximise=,stage=3";
    struct Launch {
        std::string tag;
        std::vector<std::string> args;
        int views;
    };
    std::vector<Launch> launches;
    for (const char* size : {"1280x800", "1920x1080", "3840x2160"})
        for (const char* scale : {"1", "1.5", "2"})
            for (const char* lang : {"en", "zh"}) {
                const std::string tag = std::string(size) + "-" + scale + "-" + lang;
                const std::vector<std::string> common = {"--size", size, "--font-scale", scale,
                                                         "--lang", lang, "--backend",    "cpu"};
                Launch d{tag + "-default", common, 16};
                d.args.insert(d.args.end(), {"--model", "default", "--decode", "3", "--explain",
                                             "1,0,last", "--views", views_default});
                Launch t{tag + "-toy", common, 4};
                t.args.insert(t.args.end(), {"--model", "toy", "--lesson", "1", "--lesson-step",
                                             "3", "--views", views_toy});
                launches.push_back(d);
                launches.push_back(t);
            }
    const fs::path dir = kvs::test::temp_dir("gui-stage-views");
    std::ofstream list(dir / "runs");
    for (const auto& l : launches) {
        std::string cmd = quote(KVSCOPE_GUI_BIN);
        for (const auto& a : l.args) cmd.append(" ").append(quote(a));
        const std::string b = (dir / l.tag).string();
        cmd += " --layout-json " + quote(b + ".json") + " >" + quote(b + ".err") + " 2>&1";
        list << cmd << "\n";
    }
    list.close();
    const std::string script = "xargs -d '\\n' -P 2 -n 1 sh -c < " + quote((dir / "runs").string());
    Run r;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const std::string cmd = "KVSCOPE_XVFB_SCREEN=3840x2160x24 " + quote(KVSCOPE_WITH_XVFB) +
                                " sh -c " + quote(script) + " 2>" + quote((dir / "err").string());
        const int status = std::system(cmd.c_str());
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.err = slurp(dir / "err");
        if (!xvfb_trouble(r.err)) break;
    }
    INFO(r.err);
    int checked = 0;
    for (const auto& l : launches)
        for (int v = 0; v <= l.views; ++v) {
            std::string file = l.tag;  // the first frame's record, then FILE-N.json per view
            if (v > 0) file.append("-").append(std::to_string(v));
            file.append(".json");
            INFO(file << ": " << slurp(dir / (l.tag + ".err")));
            REQUIRE(fs::exists(dir / file));
            const json layout = json::parse(slurp(dir / file));
            REQUIRE(layout.at("texts").size() > 10);
            for (const auto& p : text_problems(layout)) FAIL_CHECK(p);
            ++checked;
        }
    CHECK(checked == 18 * (17 + 5));
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

namespace {

// The window's layout record only (no PNG) for `args` at `size` and text `scale`.
json layout_of(const std::vector<std::string>& args, const std::string& size,
               const std::string& scale, const std::string& tag) {
    const fs::path dir = kvs::test::temp_dir("gui-fits-" + tag);
    std::vector<std::string> a = args;
    a.insert(a.end(),
             {"--size", size, "--font-scale", scale, "--layout-json", (dir / "l.json").string()});
    const Run r = run_app(a);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(slurp(dir / "l.json"));
}

std::vector<double> main_heat_sides(const json& layout) {
    std::vector<double> out;
    for (const auto& h : layout["heatmaps"])
        if (h["main"].get<bool>()) out.push_back(h["rect"]["w"].get<double>());
    return out;
}

const json& plot_named(const json& layout, const std::string& name) {
    for (const auto& p : layout["plots"])
        if (p["name"] == name) return p;
    FAIL("no plot " << name);
    static json none;
    return none;
}

}  // namespace

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

TEST_CASE("a message at the end of generation shows in the toolbar, over no panel",
          "[gui][screenshot][lessons]") {
    // Lesson 4 step 3 ends its generation with the model's end token, the Inside attention
    // panel open with its legend at the window's bottom.
    const json l = layout_of({"--backend", "cpu", "--lesson", "4", "--lesson-step", "3"},
                             "1280x800", "1", "message");
    REQUIRE(!l["messages"].empty());
    const double toolbar_bottom =
        l["panels"]["toolbar"]["y"].get<double>() + l["panels"]["toolbar"]["h"].get<double>();
    bool seen = false;
    for (const auto& t : l["texts"]) {
        if (t["text"].get<std::string>().find("Generation ended") == std::string::npos) continue;
        seen = true;
        CHECK(t["panel"] == "toolbar");
        CHECK(t["rect"]["y"].get<double>() + t["rect"]["h"].get<double>() <= toolbar_bottom);
    }
    CHECK(seen);
    for (const auto& p : text_problems(l)) FAIL_CHECK(p);
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

namespace {

// The size of what a panel shown alone draws (keys 1-9): the heatmap's side, the KV grids'
// height, the time plot's area; for the text panels, the median height of their lines' glyphs.
double presenter_visual(const json& l, const std::string& id) {
    if (id == "attention") {
        const auto w = main_heat_sides(l);
        return w.empty() ? 0 : w.front();
    }
    if (id == "kv") {
        double h = 0;
        for (const auto& g : l.at("kv_grids")) h += g.at("rect").at("h").get<double>();
        return h;
    }
    if (id == "time") {
        const double fh = 16 * l.at("scale").at(0).get<double>();
        return plot_named(l, "time").at("rect").at("h").get<double>() - 2.5 * fh;
    }
    std::vector<double> hs;
    for (const auto& t : l.at("texts"))
        if (t.at("panel") != "toolbar" && !t.at("overlay").get<bool>())
            hs.push_back(t.at("rect").at("h").get<double>());
    if (hs.empty()) return 0;
    std::nth_element(hs.begin(), hs.begin() + hs.size() / 2, hs.end());
    return hs[hs.size() / 2];
}

}  // namespace

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
                    // text 1 draws its numbers at twice the text): 10% for text lines.
                    const bool graphic =
                        ids[v] == "attention" || ids[v] == "kv" || ids[v] == "time";
                    CHECK(got[1][v] + (graphic ? 0.5 : 0.1 * got[0][v]) >= got[0][v]);
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
                CHECK(s.at("shared_blocks").get<int>() > 0);
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
