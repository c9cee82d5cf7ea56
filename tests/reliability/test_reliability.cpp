// Classes of bad input (the window's own are in test_gui_reliability.cpp, test_gui_views.cpp
// and test_gui_app.cpp): a lesson check's indices, the files kvscope writes, runaway lesson work,
// escape sequences on the terminal, silent wrong results. Each case is a class, not one example.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/loaders/model_loader.h"
#include "core/session/sampler.h"
#include "core/session/session.h"
#include "core/session/trace_json.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "core/util/utf8.h"
#include "kernels/cpu/cpu_backend.h"
#include "lessonlib/batch_sweep.h"
#include "lessonlib/lesson_metrics.h"
#include "lessonlib/lesson_parser.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using test::tiny_model;
namespace fs = std::filesystem;

namespace {

std::vector<unsigned char> bytes_of(const std::string& s) {
    return {s.begin(), s.end()};
}

}  // namespace

// ---- 1. lesson check indices ----------------------------------------------------------------

TEST_CASE("every metric index: negative from the end, range-checked, huge or NaN refused",
          "[reliability][lesson]") {
    const auto m = open_model(tiny_model());  // 2 layers, 4 heads, context 64
    CpuBackend be;
    SessionConfig cfg;
    cfg.capture.attention = true;
    cfg.keep_logits = true;
    cfg.max_new_tokens = 4;
    Session s(*m, be, cfg);
    s.set_prompt("the cat");
    s.step();
    s.step();
    LessonFacts f;
    f.model = m.get();
    f.session = &s;
    const auto n = [](double v) { return LessonValue::number(v); };
    const auto read = [&](const std::string& name, std::vector<LessonValue> args) {
        return read_lesson_metric(f, name, args);
    };
    const auto error = [&](const std::string& name, std::vector<LessonValue> args) {
        try {
            read(name, args);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    // Negative indices resolve to the same entry as their positive twin, in every position (a
    // query and a key are named by their positions, from 1).
    const AttentionRows& a = s.trace().back().attention;
    REQUIRE(a.rows >= 1);
    const int newest = a.q_pos0 + a.rows;  // the newest query's position
    const int keys = static_cast<int>(a.row(1, 3, a.rows - 1).size());
    REQUIRE(keys >= 2);
    CHECK(read("weight", {n(-2), n(-4), n(-1), n(1)}).num ==
          read("weight", {n(0), n(0), n(newest), n(1)}).num);
    CHECK(read("weight", {n(-1), n(-1), n(-1), n(-1)}).num ==
          read("weight", {n(1), n(3), n(newest), n(keys)}).num);
    CHECK(read("token", {n(-2)}).str == read("token", {n(0)}).str);
    CHECK(read("top", {n(-1)}).is_string());
    // Out of range on either side names the index and the count.
    CHECK(error("weight", {n(-3), n(0), n(0), n(0)}) == "layer -3 does not exist (there are 2)");
    CHECK(error("weight", {n(2), n(0), n(0), n(0)}) == "layer 2 does not exist (there are 2)");
    CHECK(error("weight", {n(0), n(-5), n(0), n(0)}) == "head -5 does not exist (there are 4)");
    CHECK(error("weight", {n(0), n(0), n(newest), n(keys + 1)}) ==
          "key position " + std::to_string(keys + 1) +
              " is not one the latest step holds (positions 1.." + std::to_string(keys) + ")");
    CHECK(error("weight", {n(0), n(0), n(newest), n(-keys - 1)}).rfind("key position -", 0) == 0);
    // A query the latest step did not compute (a cached decode step computed its newest only).
    CHECK(error("weight", {n(0), n(0), n(1), n(1)}) ==
          "query position 1 is not one the latest step holds (position " + std::to_string(newest) +
              ")");
    CHECK(error("token", {n(-3)}) == "step -3 does not exist (there are 2)");
    // Numbers no int can hold, and not numbers at all: one message, no cast out of range.
    for (double bad : {1e300, -1e300, 2147483648.0, 1e10, std::nan(""), -HUGE_VAL, HUGE_VAL}) {
        INFO(bad);
        CHECK(error("token", {n(bad)}).rfind("step must be a whole number from -1e9 to 1e9", 0) ==
              0);
        CHECK(error("weight", {n(0), n(bad), n(0), n(0)})
                  .rfind("head must be a whole number from -1e9 to 1e9", 0) == 0);
        CHECK(error("top", {n(bad)}).rfind("rank must be a whole number", 0) == 0);
    }
    CHECK(error("token", {n(0.5)}).rfind("step must be a whole number", 0) == 0);
}

TEST_CASE("a lesson checking weight(-4,-8,1,1) on the default model gets one clear line",
          "[reliability][lesson][cli]") {
    const auto dir = test::temp_dir("reliability-lesson-index");
    const std::string lesson =
        "# Indices\n\n## Step\n@model default\n@prompt \"Today's weather is so\"\n@prefill\n"
        "@expect weight(-4,-8,1,1) > 0\n@expect weight(-5,0,1,1) > 0\n@expect token(1e300) == "
        "\"x\"\n@expect weight(0,0,0,1) > 0\n";
    test::write_file(dir / "i.md", bytes_of(lesson));
    const auto r = test::run_cli({"lesson", (dir / "i.md").string()});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);  // three checks fail; no signal
    CHECK(r.out.find("PASS  @expect weight(-4,-8,1,1) > 0") != std::string::npos);
    // Positions count from 1: position 0 names no query, and the line says which there are.
    CHECK(r.out.find("query position 0 is not one the latest step holds (positions 1..") !=
          std::string::npos);
    CHECK(r.out.find("layer -5 does not exist (there are 4)") != std::string::npos);
    CHECK(r.out.find("step must be a whole number from -1e9 to 1e9, not 1e+300") !=
          std::string::npos);
}

// ---- 3. outputs -----------------------------------------------------------------------------

TEST_CASE("an output naming an input of the run is refused, by inode, and the input is intact",
          "[reliability][output][cli]") {
    const auto dir = test::temp_dir("reliability-inputs");
    const std::string model = test::write_tiny_model(dir);
    const std::string tok = model.substr(0, model.size() - 4) + ".tok.bin";
    const std::string before = test::slurp(model), tok_before = test::slurp(tok);
    // Another name for the same file: a hard link, and a path with "./" in it.
    REQUIRE(::link(model.c_str(), (dir / "alias.bin").c_str()) == 0);
    for (const std::string& target :
         {model, tok, (dir / "alias.bin").string(), (dir / "." / "tiny.bin").string()}) {
        INFO(target);
        const auto r = test::run_cli(
            {"generate", "--model", model, "--prompt", "the", "--trace-json", target});
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("is an input of this run") != std::string::npos);
        CHECK(test::one_line(r.err));
    }
    const auto lesson_dir = test::temp_dir("reliability-inputs-lesson");
    CHECK(test::slurp(model) == before);
    CHECK(test::slurp(tok) == tok_before);
    // The library call itself, for every writer (settings and screenshots use it too): once this
    // process has read the model, it is an input here too.
    const auto opened = open_model(model);
    CHECK_THROWS_WITH(write_output_file(model, "x"), Catch::Contains("is an input of this run"));
}

TEST_CASE("outputs: a killed run leaves the old file, /dev/full is an error, two writers",
          "[reliability][output][cli]") {
    const auto dir = test::temp_dir("reliability-outputs");
    const std::string trace = (dir / "t.json").string();
    // An earlier run's trace (its first bytes a trace's: only such a file is replaced).
    const std::string old = "{\"kvscope_trace\": \"an earlier run\"}";
    test::write_file(trace, bytes_of(old));
    // SIGPIPE: stdout is a pipe whose reader is gone before the run starts, so its first print
    // kills it (a shell's `| true` races the run: a fast generation may end first).
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::close(fds[0]);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        ::dup2(fds[1], 1);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 2);
        const std::string model = tiny_model();
        ::execl(KVSCOPE_CLI, "kvscope-cli", "generate", "--model", model.c_str(), "--prompt",
                "the cat", "--trace-json", trace.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(fds[1]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGPIPE);
    CHECK(test::slurp(trace) == old);
    // No temporary file is left behind by a run that ends normally.
    const auto ok = test::run_cli({"toy", "--trace-json", trace});
    CHECK(ok.exit_code == 0);
    CHECK(nlohmann::json::parse(test::slurp(trace)).at("kvscope_trace") == kvs::kTraceJsonVersion);
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
    CHECK(files == 1);
    // A full disk: every writer says so and exits 2.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"toy", "--trace-json", "/dev/full"},
             {"generate", "--model", tiny_model(), "--trace-json", "/dev/full"},
             {"bench", "--model", tiny_model(), "--lengths", "4", "--repeats", "1", "--warmup", "0",
              "--csv", "/dev/full"}}) {
        const auto r = test::run_cli(args);
        INFO(args[0] << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("/dev/full: write failed: No space left on device") != std::string::npos);
    }
    CHECK_THROWS_WITH(write_output_file("/dev/full", "x"),
                      "/dev/full: write failed: No space left on device");
    // Two runs writing one trace at the same time: the file is one of them, whole.
    const std::string both = (dir / "both.json").string();
    const std::string one = test::quote(KVSCOPE_CLI) + " generate --model " +
                            test::quote(tiny_model()) + " --prompt 'the cat' --trace-json " +
                            test::quote(both) + " >/dev/null 2>&1";
    for (int round = 0; round < 3; ++round) {
        REQUIRE(std::system(("(" + one + " & " + one + " & wait)").c_str()) == 0);
        REQUIRE_NOTHROW(nlohmann::json::parse(test::slurp(both)));
    }
    // A new file gets the usual mode, not mkstemp's 0600.
    const std::string fresh = (dir / "fresh.txt").string();
    write_output_file(fresh, "hello\n");
    struct stat st {};
    REQUIRE(::stat(fresh.c_str(), &st) == 0);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    CHECK((st.st_mode & 0777) == (0666 & ~mask));
}

// ---- 4. runaway lesson work -----------------------------------------------------------------

TEST_CASE("a lesson's @batch work is bounded, over all its @batch lines", "[reliability][lesson]") {
    const std::string head = "# Batch\n\n## Step\n";
    const std::string one =
        "@batch sizes=1,2,4,8 decode=8 repeats=3 prompts=\"One day\" | \"Today\"\n";
    // The shipped lesson 8's sweep is 3 x 4 x 9 = 108 passes: far below the bound.
    CHECK_NOTHROW(parse_lesson(head + one, "ok.md"));
    std::string sizes = "1";
    for (int i = 0; i < 200; ++i) sizes += ",8";
    CHECK_THROWS_WITH(
        parse_lesson(head + "@batch sizes=" + sizes + " decode=4096 repeats=100 prompts=\"a\"\n",
                     "big.md"),
        Catch::StartsWith("big.md:4: @batch: this lesson's @batch lines would run "
                          "82349700 forward passes") &&
            Catch::EndsWith("at most 20000"));
    // Many small lines add up.
    std::string many = head;
    for (int i = 0; i < 70; ++i)
        many += "@batch sizes=1,2,4,8 decode=40 repeats=2 prompts=\"a\"\n";  // 328 each
    CHECK_THROWS_WITH(parse_lesson(many, "many.md"),
                      Catch::Contains("@batch: this lesson's @batch lines would run"));
}

TEST_CASE("a @batch sweep can be stopped between forward passes", "[reliability][lesson]") {
    const auto m = open_model(tiny_model());
    CpuBackend be;
    BatchPlan plan;
    plan.sizes = {1, 2};
    plan.decode_steps = 3;
    plan.repeats = 2;
    plan.prompts = {"the cat"};
    long long passes = 0;
    measure_batches(*m, be, plan, [&] { ++passes; });
    CHECK(passes == batch_forward_passes(plan));  // 2 x 2 x (1 + 3)
    struct Stop {};
    passes = 0;
    CHECK_THROWS_AS(measure_batches(*m, be, plan,
                                    [&] {
                                        if (++passes == 5) throw Stop{};
                                    }),
                    Stop);
    CHECK(passes == 5);
}

// ---- 5. terminal escapes --------------------------------------------------------------------

TEST_CASE("untrusted text on the terminal: controls shown, UTF-8 kept, split characters joined",
          "[reliability][escape]") {
    CHECK(escape_for_terminal("a\x1b[2Jb\x1b]0;title\x07") == "a\\x1b[2Jb\\x1b]0;title\\x07");
    CHECK(escape_for_terminal("line\nnext\ttab\r") == "line\nnext\ttab\\x0d");
    CHECK(escape_for_terminal("\xc2\x9b"
                              "31m") == "\\xc2\\x9b31m");  // C1 CSI
    CHECK(escape_for_terminal("你好 \xf0\x9f\x98\x80") == "你好 \xf0\x9f\x98\x80");
    CHECK(escape_for_one_line("a\nb") == "a\\x0ab");
    // Code points that reorder or hide text: a right-to-left override turns "exe.txt" into what
    // reads as "txt.exe"; zero-width characters and joiners hide; U+2028 ends a line.
    CHECK(escape_for_one_line("a\u202eexe.txt") == "a\\u202eexe.txt");
    CHECK(escape_for_terminal("x\u200by\u200cz\u200d\u2066\u2069\ufeff\u2028\u061c") ==
          "x\\u200by\\u200cz\\u200d\\u2066\\u2069\\ufeff\\u2028\\u061c");
    CHECK(escape_for_one_line("tag\U000E0041") == "tag\\U000e0041");
    // Text, emoji (a variation selector picks a look, it hides nothing) and Chinese stay.
    const std::string text = "caf\u00e9 \u2764\ufe0f \u4f60\u597d \U0001F600";
    CHECK(escape_for_terminal(text) == text);
    CHECK(escape_for_one_line(escape_for_one_line("\u202e")) == "\\u202e");
    // A character split over two tokens is printed whole; a cut one at the end is escaped.
    TerminalText t;
    std::string out = t.feed("\xe4\xbd");
    CHECK(out.empty());
    out += t.feed("\xa0!");
    CHECK(out == "你!");
    CHECK(t.feed("\xe4") == "");
    CHECK(t.finish() == "\\xe4");
    CHECK(t.feed("\xe4x") == "\\xe4x");
}

TEST_CASE("generate, explain and lesson --prose print no escape sequence from files or prompts",
          "[reliability][escape][cli]") {
    // A tokenizer whose pieces hold escape sequences (clear screen, set title, 8-bit CSI).
    const auto tdir = test::temp_dir("reliability-escape-tok");
    const std::string model = test::write_tiny_model(tdir);
    test::write_file(
        tdir / "esc.tok.bin",
        test::synthetic_tokenizer({"[", "2", "J", "\x1b", "\x1b[", "\x1b[2", "\x1b[2J"}, 300));
    const auto r = test::run_cli({"generate", "--model", model, "--tokenizer",
                                  (tdir / "esc.tok.bin").string(), "--prompt",
                                  "a\x1b[2J b\x1b]0;pwned\x07 c\xc2\x9b"
                                  "2J",
                                  "--max-new-tokens", "3"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find('\x1b') == std::string::npos);
    CHECK(r.out.find('\x07') == std::string::npos);
    CHECK(r.out.find("\xc2\x9b") == std::string::npos);
    INFO(r.out << r.err);
    CHECK(r.out.find("\\x1b[2J") != std::string::npos);
    // explain quotes the query's piece and every key's: the same tokenizer, the same escaping.
    const auto x = test::run_cli({"explain", "--model", model, "--tokenizer",
                                  (tdir / "esc.tok.bin").string(), "--prompt", "a\x1b[2J b"});
    INFO(x.out << x.err);
    CHECK(x.exit_code == 0);
    CHECK(x.out.find('\x1b') == std::string::npos);
    CHECK(x.out.find("\\x1b") != std::string::npos);
    const auto dir = test::temp_dir("reliability-escape-lesson");
    test::write_file(dir / "e.md",
                     bytes_of("# Title \x1b]0;pwned\x07\n\nIntro \x1b[2J here.\n\n## Step "
                              "\x1b[31mred\n\nProse \x1b[H\x1b[2J.\n\n@model toy\n@expect "
                              "n_layers == 1\n"));
    const auto l = test::run_cli({"lesson", (dir / "e.md").string(), "--prose"});
    INFO(l.out << l.err);
    CHECK(l.exit_code == 0);
    CHECK(l.out.find('\x1b') == std::string::npos);
    CHECK(l.out.find("Title \\x1b]0;pwned\\x07") != std::string::npos);
    CHECK(l.out.find("Prose \\x1b[H\\x1b[2J.") != std::string::npos);
    // Error messages too (a lesson path with ESC in it).
    const auto e = test::run_cli({"lesson", (dir / "no\x1b[2J.md").string()});
    CHECK(e.exit_code == 2);
    CHECK(e.err.find('\x1b') == std::string::npos);
}

TEST_CASE("text from files is shown escaped: a trace's labels in replay and CSV, a model's name",
          "[reliability][escape][cli]") {
    const auto dir = test::temp_dir("reliability-escape-labels");
    const std::string t = (dir / "t.json").string();
    REQUIRE(test::run_cli({"generate", "--model", tiny_model(), "--prompt", "a", "--max-new-tokens",
                           "1", "--trace-json", t})
                .exit_code == 0);
    // ESC sequences (clear screen, set title), BEL, a right-to-left override and a newline in
    // every label a trace holds.
    const std::string evil = "x\x1b[2J\x1b]0;pwned\x07\xe2\x80\xae\ny";
    auto j = nlohmann::json::parse(test::slurp(t));
    for (const char* k : {"program", "version", "date", "backend", "device", "host"})
        j["recorded"][k] = evil;
    j["model"]["name"] = evil;
    j["model"]["format"] = evil;
    for (auto& s : j["steps"]) s["time"]["backend"] = s["time"]["device"] = evil;
    const std::string bad = (dir / "bad.json").string(), csv = (dir / "bad.csv").string();
    test::write_file(bad, bytes_of(j.dump()));
    const auto r = test::run_cli({"replay", bad, "--csv", csv});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    for (const std::string& out : {r.out, test::slurp(csv)}) {
        CHECK(out.find('\x1b') == std::string::npos);
        CHECK(out.find('\x07') == std::string::npos);
        CHECK(out.find("\xe2\x80\xae") == std::string::npos);
        CHECK(out.find("x\\x1b[2J\\x1b]0;pwned\\x07\\u202e\\x0ay") != std::string::npos);
    }
    CHECK(r.out.find("recorded by x\\x1b[2J") == 0);  // program, version and date: one line
    // A model file named with an escape sequence: its name in info is escaped too.
    const fs::path named = dir / "m\x1b[31m";
    fs::copy_file(tiny_model(), named.string() + ".bin");
    fs::copy_file(tiny_model().substr(0, tiny_model().size() - 4) + ".tok.bin",
                  named.string() + ".tok.bin");
    const auto i = test::run_cli({"info", "--model", named.string() + ".bin"});
    INFO(i.out << i.err);
    CHECK(i.exit_code == 0);
    CHECK(i.out.find('\x1b') == std::string::npos);
    CHECK(i.out.find("model m\\x1b[31m") != std::string::npos);
}

// ---- 7. silent wrong results and poor messages ----------------------------------------------

TEST_CASE("seed 0 samples (no degenerate xorshift state), other seeds keep run.c's stream",
          "[reliability][sampler]") {
    std::vector<float> logits(16, 0.0f);  // uniform: every draw picks by the coin alone
    SamplerConfig c;
    c.temperature = 1.0f;
    c.top_p = 0.0f;
    c.seed = 0;
    Sampler zero(c);
    std::set<int> seen;
    for (int i = 0; i < 64; ++i) {
        const Draw d = zero.sample(logits);
        CHECK(d.coin > 0.0f);
        seen.insert(d.token);
    }
    CHECK(seen.size() > 8);
    CHECK(sampler_state(0) == 0xE220A8397B1DCDAFull);  // splitmix64's first word from state 0
    CHECK(sampler_state(42) == 42);                    // run.c's state for every seed but 0
    CHECK(sampler_state(1) == 1);
}

TEST_CASE("options and files that could give silent or wrong results are one-line errors",
          "[reliability][cli]") {
    const auto dir = test::temp_dir("reliability-messages");
    auto error_of = [](const std::vector<std::string>& args) {
        const auto r = test::run_cli(args);
        CHECK(r.exit_code == 2);
        CHECK(test::one_line(r.err));
        return r.err;
    };
    for (const std::string seed : {"1.5", "-1", "1e3", "18446744073709551616", "0x10", ""}) {
        INFO(seed);
        CHECK(error_of({"generate", "--model", "toy", "--seed", seed}).find("--seed") !=
              std::string::npos);
    }
    CHECK(test::run_cli({"generate", "--model", tiny_model(), "--seed", "0", "--temperature", "1",
                         "--max-new-tokens", "3"})
              .exit_code == 0);
    for (const std::string opt : {"--model", "--tokenizer", "--trace-json", "--backend"})
        CHECK(error_of({"generate", opt, ""}) ==
              "kvscope-cli: error: generate: " + opt + " needs a value, not an empty string\n");
    CHECK(error_of({"lesson", "--lang", ""}).find("--lang needs a value") != std::string::npos);
    // A BOM before the title (Windows editors) is not part of it.
    test::write_file(dir / "bom.md", bytes_of("\xEF\xBB\xBF# Title\n\n## Step\n@model toy\n"));
    const Lesson l = load_lesson((dir / "bom.md").string());
    CHECK(l.title == "Title");
    // Not regular files: said so, not "no such lesson file" (and no hang on a FIFO).
    REQUIRE(::mkfifo((dir / "fifo.md").c_str(), 0600) == 0);
    CHECK(error_of({"lesson", (dir / "fifo.md").string()}).find("fifo.md: not a regular file") !=
          std::string::npos);
    CHECK(error_of({"lesson", "/dev/zero"}).find("/dev/zero: not a regular file") !=
          std::string::npos);
    CHECK(error_of({"lesson", (dir / "absent.md").string()}).find("no such lesson file") !=
          std::string::npos);
    CHECK(error_of({"lesson", "99999999999999999999"}).find("no lesson '99999999999999999999'") !=
          std::string::npos);
    // A vocab field of INT_MIN is reported as itself, not as 0.
    std::vector<unsigned char> h(28);
    const std::int32_t header[7] = {16, 40, 2, 4, 2, INT_MIN, 64};
    std::memcpy(h.data(), header, 28);
    test::write_file(dir / "intmin.bin", h);
    CHECK(error_of({"info", "--model", (dir / "intmin.bin").string()})
              .find("vocab_size = -2147483648") != std::string::npos);
}
