#pragma once
// What the window's tests under Xvfb share (tests/test_gui_app*.cpp): running the window, its
// screenshots decoded with stb_image, its --layout-json read back, the tiny model, the text
// checker and the stage's configurations.
#include <stb_image.h>
#include <sys/wait.h>
#include <algorithm>
#include <catch2/catch.hpp>
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
#include "lessonlib/lesson_files.h"
#include "lessonlib/lesson_parser.h"
#include "tests/support/hostile_files.h"
#include "tests/support/test_helpers.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kvs::gui_app_test {

using kvs::test::quote;
using kvs::test::slurp;
using kvs::test::tiny_model;

struct Run {
    int exit_code = -1;
    std::string out, err;
};

// A virtual display that did not start (tests/gui/with-xvfb.sh says so and exits 125) is not the
// app's failure: the run is retried.
inline bool xvfb_trouble(const std::string& err) {
    return err.find("with-xvfb: Xvfb did not start") != std::string::npos;
}

// `env` is a prefix such as "env -u DISPLAY"; `xvfb` runs the app on a virtual display.
inline Run run_app(const std::vector<std::string>& args, bool xvfb = true,
                   const std::string& env = {}) {
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
inline constexpr const char* kStartWindowAndFocus = R"(set -u
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
inline int drive_window(const std::string& cmd, const fs::path& dir,
                        const std::function<void()>& fresh, const std::string& expect) {
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

inline Image load_png(const std::string& path) {
    Image im;
    int comp = 0;
    unsigned char* data = stbi_load(path.c_str(), &im.w, &im.h, &comp, 3);
    REQUIRE(data != nullptr);
    im.px.assign(data, data + std::size_t(im.w) * im.h * 3);
    stbi_image_free(data);
    return im;
}

inline std::array<int, 3> rgb(const json& j) {
    return {j[0].get<int>(), j[1].get<int>(), j[2].get<int>()};
}

struct Shot {
    Image image;
    json layout;
    fs::path dir;  // s.png, s.json and --views' s-N.json
};

// Renders the tiny synthetic model (always available) after `steps` and loads both outputs.
inline Shot screenshot(const std::vector<std::string>& extra, const std::string& tag) {
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

inline const json& main_heatmap(const json& layout, int index = 0) {
    int seen = 0;
    for (const auto& h : layout.at("heatmaps"))
        if (h.at("main").get<bool>() && seen++ == index) return h;
    FAIL("no main heatmap in the layout");
    static json none;
    return none;
}

// Centre of cell (q, k) of an n x n heatmap drawn in `rect`.
inline std::pair<double, double> cell_centre(const json& rect, int n, int q, int k) {
    const double x = rect.at("x").get<double>(), y = rect.at("y").get<double>();
    const double w = rect.at("w").get<double>(), h = rect.at("h").get<double>();
    return {x + (k + 0.5) * w / n, y + (q + 0.5) * h / n};
}

// The tiny model with a prompt of several tokens, head (1, 2) shown large, and `more`.
inline std::vector<std::string> tiny_with(const std::vector<std::string>& more) {
    std::vector<std::string> a = {"--model",   tiny_model(), "--prompt", "the cat sat in the hat",
                                  "--backend", "cpu",        "--layer",  "1",
                                  "--head",    "2"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

// The texts a panel recorded (--layout-json), in drawing order.
inline std::vector<json> panel_texts(const json& layout, const std::string& panel) {
    std::vector<json> out;
    for (const auto& t : layout.at("texts"))
        if (t.at("panel") == panel) out.push_back(t);
    return out;
}

inline bool has_text(const json& layout, const std::string& panel, const std::string& text) {
    for (const auto& t : panel_texts(layout, panel))
        if (t.at("text") == text) return true;
    return false;
}

// Whether a recorded line of `panel` holds `part`: texts drawn one after another on a line are
// recorded as one run (gui/draw/text_record.h), so the formula's parts are pieces of one line.
inline bool line_has(const json& layout, const std::string& panel, const std::string& part) {
    for (const auto& t : panel_texts(layout, panel))
        if (t.at("text").get<std::string>().find(part) != std::string::npos) return true;
    return false;
}

// The numbers drawn in the inside-attention diagram's column headed `header`, top to bottom.
inline std::vector<std::string> column_texts(const json& layout, const std::string& header,
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

// Text rectangles of a --layout-json that overlap each other or are cut off by their panel
// (a table cell, a child window). Text of floating overlays is left out, and so is text cut at
// an edge its window scrolls past (cut at the top of a window that scrolls down, not cut at the
// right of it). Each problem is one line naming the texts.
inline std::vector<std::string> text_problems(const json& layout) {
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

inline json text_item(const std::string& text, double x, double y, double w, double h,
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

// A start of the window: its name, its arguments and how many --views it records after its first
// frame.
struct StageConfig {
    std::string tag;
    std::vector<std::string> args;
    int views = 0;
};

// The window's configurations a class meets: 3 window sizes x 3 text sizes x English and
// Chinese x the toy and the default model x the cache on and compare x a lesson open and closed,
// all 144 (about a minute on two idle cores), then the named cases below.
// KVSCOPE_STAGE_MATRIX=quick runs a covering subset of 18 of the 144 instead: every window size
// with every text size, twice, and for the four two-way factors the rows of a 2^(4-1) design (each
// pair of them meets in all four combinations), cycled over the 9 size x text pairs. With a lesson
// open the lesson picks the model: lesson 1 step 3 (the toy) or lesson 4 step 2 (the default
// model); its cache mode is the lesson's. The whole matrix is the default because the subset misses
// cases only it has: the KV panel squeezed to its title under the inside-attention band at
// 1920x1080, the what-if table's numbers cut in Chinese at 1280x800.
inline std::vector<StageConfig> stage_matrix() {
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
    // The end of generation's notice with no toolbar to hold it: a panel alone (Inside attention,
    // its legend at the window's bottom; Next token at large Chinese text) and presenter mode.
    out.push_back({"1280x800-1-en-lesson4-end-inside",
                   {"--size", "1280x800", "--backend", "cpu", "--lesson", "4", "--lesson-step", "3",
                    "--maximise", "inside"}});
    out.push_back({"1920x1080-2-zh-lesson4-end-next",
                   {"--size", "1920x1080", "--font-scale", "2", "--lang", "zh", "--backend", "cpu",
                    "--lesson", "4", "--lesson-step", "3", "--maximise", "next"}});
    out.push_back({"1280x800-1.5-en-lesson4-end-presenter",
                   {"--size", "1280x800", "--font-scale", "1.5", "--backend", "cpu", "--lesson",
                    "4", "--lesson-step", "3", "--presenter"}});
    return out;
}

// The texts of the inside panel that are numbers (the diagram's cells).
inline std::vector<json> inside_numbers(const json& layout) {
    std::vector<json> out;
    for (const auto& t : panel_texts(layout, "inside_attention")) {
        const std::string x = t.at("text");
        if (!x.empty() && x.find_first_not_of("-0123456789.e+") == std::string::npos &&
            x.find_first_of("0123456789") != std::string::npos)
            out.push_back(t);
    }
    return out;
}

inline double main_heat_width(const json& layout) {
    for (const auto& h : layout.at("heatmaps"))
        if (h.at("main").get<bool>()) return h.at("rect").at("w").get<double>();
    return 0;
}

// The window's layout record only (no PNG) for `args` at `size` and text `scale`.
inline json layout_of(const std::vector<std::string>& args, const std::string& size,
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

inline std::vector<double> main_heat_sides(const json& layout) {
    std::vector<double> out;
    for (const auto& h : layout["heatmaps"])
        if (h["main"].get<bool>()) out.push_back(h["rect"]["w"].get<double>());
    return out;
}

inline const json& plot_named(const json& layout, const std::string& name) {
    for (const auto& p : layout["plots"])
        if (p["name"] == name) return p;
    FAIL("no plot " << name);
    static json none;
    return none;
}

// The median glyph height of the stage's lines (not the toolbar's, nor an overlay's).
inline double median_text_h(const json& l) {
    std::vector<double> hs;
    for (const auto& t : l.at("texts"))
        if (t.at("panel") != "toolbar" && !t.at("overlay").get<bool>())
            hs.push_back(t.at("rect").at("h").get<double>());
    if (hs.empty()) return 0;
    std::nth_element(hs.begin(), hs.begin() + hs.size() / 2, hs.end());
    return hs[hs.size() / 2];
}

// The size of what a panel shown alone draws (keys 1-9): the heatmap's side, the KV grids'
// height, the time plot's area; for the text panels, the median height of their lines' glyphs.
inline double presenter_visual(const json& l, const std::string& id) {
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
    return median_text_h(l);
}

}  // namespace kvs::gui_app_test
