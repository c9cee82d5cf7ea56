// What the window draws is what the engine did, across every view of it: for causal and
// bidirectional attention, with and without the cache, at the prefill and at a decode step, on
// the default model, the toy and a compact Q8_0 file, live and replayed, the numbers the window
// records in --layout-json (Inside attention's row and the matrix beside it, the Time panel's
// bytes) equal `kvscope-cli explain --json`, the trace the window wrote, and `kvscope-cli info`.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/util/format.h"
#include "tests/support/test_helpers.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using kvs::test::quote;
using kvs::test::slurp;

// The window on a virtual display (a display that did not start is retried, as in
// tests/gui/test_gui_app.cpp); its stderr when it failed.
std::string run_window(const std::vector<std::string>& args, const fs::path& dir) {
    std::string cmd = quote(KVSCOPE_WITH_XVFB) + " " + quote(KVSCOPE_GUI_BIN);
    for (const auto& a : args) cmd.append(" ").append(quote(a));
    cmd.append(" >").append(quote((dir / "out").string()));
    cmd.append(" 2>").append(quote((dir / "err").string()));
    for (int attempt = 0; attempt < 3; ++attempt) {
        const int status = std::system(cmd.c_str());
        const std::string err = slurp(dir / "err");
        if (err.find("with-xvfb: Xvfb did not start") != std::string::npos) continue;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "window failed: " + err;
    }
    return "no virtual display";
}

json cli_json(const std::vector<std::string>& args) {
    const auto r = kvs::test::run_cli(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
}

// A float as both sides wrote it: null for what has no number (−∞, NaN), else exactly the float.
bool same_number(const json& a, const json& b) {
    if (a.is_null() || b.is_null()) return a.is_null() == b.is_null();
    return static_cast<float>(a.get<double>()) == static_cast<float>(b.get<double>());
}

// One session's row as the window drew it against `kvscope-cli explain --json` of that session.
void check_row(const json& drawn, const json& cli, int stage_shown) {
    CHECK(drawn.at("step") == cli.at("step"));
    CHECK(drawn.at("position") == cli.at("position"));
    CHECK(drawn.at("mask") == cli.at("mask"));
    const json& keys = cli.at("keys");
    const std::size_t T = keys.size();
    REQUIRE(drawn.at("key_labels").size() == T);  // every key drawn with its numbers
    // The columns as far as the stage shows them: q·k from stage 2, the weights from stage 5.
    const std::size_t raw = drawn.at("raw").size(), scaled = drawn.at("scaled").size(),
                      mask = drawn.at("masked").size(), weights = drawn.at("weights").size();
    REQUIRE(raw == T);
    CHECK((stage_shown < 2 || scaled == T));
    CHECK((stage_shown < 3 || mask == T));
    CHECK((stage_shown < 4 || weights == T));
    CHECK((stage_shown >= 4 || weights == 0));  // no weight before the softmax's stage
    for (std::size_t k = 0; k < T; ++k) {
        INFO("key at position " << k + 1);
        const std::string label = drawn.at("key_labels")[k];
        CHECK(label.rfind(std::to_string(keys[k].at("position").get<int>()) + " ", 0) == 0);
        CHECK(same_number(drawn.at("raw")[k], keys[k].at("raw")));
        if (scaled == T) CHECK(same_number(drawn.at("scaled")[k], keys[k].at("scaled")));
        if (mask == T) CHECK(drawn.at("masked")[k] == (keys[k].at("masked").get<bool>() ? 1 : 0));
        if (weights == T) CHECK(same_number(drawn.at("weights")[k], keys[k].at("weight")));
    }
    // The matrix beside the row: every kept row of the step, each cell core's number for the
    // stage (1: q·k, 4: the weight, none where masked).
    const json& m = cli.at("matrix");
    const int rows = m.at("rows");
    if (drawn.at("matrix_rows") == 0) {
        CHECK(rows == 1);  // only a one-row matrix may be left out for room
        return;
    }
    REQUIRE(drawn.at("matrix_rows") == rows);
    REQUIRE(drawn.at("matrix_keys") == m.at("keys"));
    CHECK(drawn.at("matrix_first_position") == m.at("first_position"));
    const json& cells = drawn.at("matrix");
    int masked = 0;
    for (int r = 0; r < rows; ++r)
        for (std::size_t k = 0; k < T; ++k) {
            INFO("matrix row " << r << ", key " << k);
            const bool is_masked = m.at("masked")[r][k] == 1;
            masked += is_masked;
            const json& cell = cells[r * T + k];
            // A masked key or a row with no key to attend to has no weight.
            const bool no_weight = is_masked || m.at("empty_rows")[r] == 1;
            if (stage_shown == 1)
                CHECK(same_number(cell, m.at("raw")[r][k]));
            else
                CHECK(same_number(cell, no_weight ? json() : m.at("weights")[r][k]));
        }
    CHECK(drawn.at("matrix_masked") == masked);
}

// The Time panel's bytes against the trace the window wrote: its line for the step shown and the
// bytes plot's weights, step by step.
void check_bytes(const json& time_view, const json& trace, const std::string& info_per_token) {
    const json& steps = trace.at("steps");
    const json& last = steps.back();
    const std::string weights =
        kvs::format_bytes(last.at("counts").at("weight_bytes").get<double>());
    const std::string kv = kvs::format_bytes(last.at("counts").at("kv_read_bytes").get<double>());
    const std::string line = "step " + std::to_string(last.at("index").get<int>()) + " reads " +
                             weights + " of weights and " + kv + " of K/V";
    bool found = false;
    for (const auto& t : time_view.at("texts"))
        found |= t.at("text").get<std::string>().rfind(line, 0) == 0;
    INFO(line);
    CHECK(found);
    // A cached decode step reads the weights info says one decode token reads (an uncached one
    // also the embedding rows of every token it recomputes).
    if (!info_per_token.empty() && last.at("tokens_processed") == 1)
        CHECK(weights == info_per_token);
    for (const auto& p : time_view.at("plots")) {
        if (p.at("name") != "bytes") continue;
        const json& w = p.at("series").at("weights read");
        REQUIRE(w.size() == steps.size());
        for (std::size_t k = 0; k < steps.size(); ++k)
            CHECK(w[k].get<double>() == steps[k].at("counts").at("weight_bytes").get<double>());
    }
}

// "1017 KiB read per decode token" from `kvscope-cli info` (empty for the toy, which has none).
std::string info_per_token(const std::string& model) {
    const auto r = kvs::test::run_cli({"info", "--model", model, "--backend", "cpu"});
    REQUIRE(r.exit_code == 0);
    const auto end = r.out.find(" read per decode token");
    if (end == std::string::npos) return {};
    const auto start = r.out.rfind("; ", end);
    REQUIRE(start != std::string::npos);
    return r.out.substr(start + 2, end - start - 2);
}

}  // namespace

TEST_CASE("the window's numbers are the engine's: explain, the trace and info, live and replayed",
          "[gui][agreement]") {
    const fs::path dir = kvs::test::temp_dir("gui-agreement");
    const std::string q8 = (dir / "default-q8_0.gguf").string();
    {
        const auto r =
            kvs::test::run_cli({"export", "--model", "default", "--type", "q8_0", "--gguf", q8});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
    }
    for (const std::string model : {"default", "toy", q8.c_str()}) {
        const bool toy = model == "toy";
        const std::string prompt = toy ? "Today weather is so" : "Once upon a time";
        const std::string layer = toy ? "0" : "1";
        const std::string per_token = info_per_token(model);
        for (const std::string cache : {"on", "off", "bidirectional"}) {
            if (toy && cache == "bidirectional") continue;  // the toy's rules need the mask
            for (const bool decode : {false, true}) {
                const std::string step = decode ? "2" : "0";
                INFO(model << ", cache " << cache << ", step " << step);
                const fs::path run =
                    dir / (fs::path(model).stem().string() + "-" + cache + "-" + step);
                fs::create_directories(run);
                const std::string trace = (run / "t.json").string();
                const std::vector<std::string> shown = {"--explain",       layer + ",0,last",
                                                        "--explain-stage", "12",
                                                        "--maximise",      "inside",
                                                        "--size",          "1920x1080",
                                                        "--views",         "stage=9;maximise=time"};
                std::vector<std::string> live = {
                    "--backend",    "cpu",  "--model",       model,
                    "--prompt",     prompt, "--cache",       cache,
                    "--trace-json", trace,  "--layout-json", (run / "live.json").string()};
                if (decode)
                    live.insert(live.end(), {"--decode", "2"});
                else
                    live.push_back("--prefill");
                live.insert(live.end(), shown.begin(), shown.end());
                REQUIRE(run_window(live, run).empty());
                std::vector<std::string> replay = {"--replay", trace, "--layout-json",
                                                   (run / "replay.json").string()};
                replay.insert(replay.end(), shown.begin(), shown.end());
                REQUIRE(run_window(replay, run).empty());

                // The engine's own account of the same rows: each session of the view.
                auto explain = [&](const std::string& c) {
                    return cli_json({"explain", "--model", model, "--backend", "cpu", "--prompt",
                                     prompt, "--cache", c, "--step", step, "--layer", layer,
                                     "--head", "0", "--json"});
                };
                std::vector<json> cli;
                if (cache == "bidirectional")
                    cli = {explain("off"), explain("bidirectional")};
                else
                    cli = {explain(cache)};
                const json t = json::parse(slurp(trace));
                for (const char* which : {"live", "replay"}) {
                    INFO(which);
                    const std::string base = (run / which).string();
                    const json weights = json::parse(slurp(base + ".json"));
                    const json scores = json::parse(slurp(base + "-1.json"));
                    const json time = json::parse(slurp(base + "-2.json"));
                    const json& drawn = weights.at("explain").at("drawn");
                    REQUIRE(drawn.size() == cli.size());
                    for (std::size_t i = 0; i < cli.size(); ++i) {
                        INFO("session " << i);
                        check_row(drawn[i], cli[i], 4);
                        // Stage 9 of 14, the scores: q·k in the table and in the matrix, no
                        // weight anywhere yet.
                        check_row(scores.at("explain").at("drawn")[i], cli[i], 1);
                    }
                    check_bytes(time, t, per_token);
                }
                // The replay drew what the live window drew, number for number.
                const json a = json::parse(slurp((run / "live.json").string()));
                const json b = json::parse(slurp((run / "replay.json").string()));
                CHECK(a.at("explain").at("drawn") == b.at("explain").at("drawn"));
            }
        }
    }
}
