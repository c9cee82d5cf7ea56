// kvscope-cli as a user drives it: help, bad input (one line, exit 2), output.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_helpers.h"

using namespace kvs;
using test::run_cli;
using test::tiny_model;
namespace fs = std::filesystem;

namespace {
void expect_error(const std::vector<std::string>& args, const std::string& fragment) {
    const auto r = run_cli(args);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(test::one_line(r.err));
    CHECK(r.err.find(fragment) != std::string::npos);
}
}  // namespace

TEST_CASE("every subcommand has --help", "[cli]") {
    for (const char* cmd : {"generate", "compare", "info"}) {
        const auto r = run_cli({cmd, "--help"});
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("usage: kvscope-cli") != std::string::npos);
    }
    CHECK(run_cli({"--help"}).exit_code == 0);
    CHECK(run_cli({}).exit_code == 2);
}

TEST_CASE("bad input is one line on stderr and exit code 2", "[cli]") {
    const auto dir = test::temp_dir("bad");
    expect_error({"generate", "--model", "/nonexistent.bin"}, "/nonexistent.bin: cannot open");
    expect_error({"generate", "--model", tiny_model(), "--bogus"}, "unknown option '--bogus'");
    expect_error({"frobnicate"}, "unknown command");
    expect_error({"generate", "--model", tiny_model(), "--max-new-tokens", "abc"},
                 "not a whole number");
    expect_error({"generate", "--model", tiny_model(), "--temperature", "-1"}, "out of range");
    expect_error({"generate", "--model", tiny_model(), "--backend", "quantum"}, "unknown backend");
    // A size whose count is checked before it is shifted: 17179869185 x 2^30 wraps to 1 GiB.
    for (const char* size : {"17179869185G", "1025G", "18446744073709551617K", "0K", "1023"})
        expect_error({"soak", "--model", "toy", "--steps", "1", "--trace-budget", size},
                     "--trace-budget: '" + std::string(size) + "' is not a size from 1K to 1024G");

    // Truncated checkpoint.
    auto ck = test::synthetic_checkpoint(test::tiny_config());
    ck.resize(ck.size() / 2);
    test::write_file(dir / "cut.bin", ck);
    expect_error({"generate", "--model", (dir / "cut.bin").string(), "--tokenizer",
                  tiny_model().substr(0, tiny_model().size() - 4) + ".tok.bin"},
                 "truncated");
    // A header that lies (claims 3 layers, holds 2).
    auto lie = test::synthetic_checkpoint(test::tiny_config());
    const std::int32_t three = 3;
    std::memcpy(lie.data() + 8, &three, 4);
    test::write_file(dir / "lie.bin", lie);
    expect_error({"info", "--model", (dir / "lie.bin").string()}, "implies");
    // A tokenizer that is not one (the model file itself).
    expect_error({"generate", "--model", tiny_model(), "--tokenizer", tiny_model()},
                 "not a llama2.c tokenizer");
    // A prompt longer than the context (64 tokens).
    expect_error({"generate", "--model", tiny_model(), "--prompt", std::string(100, 'x')},
                 "longer than the model's context of 64");
    // More new tokens than the context holds.
    expect_error(
        {"generate", "--model", tiny_model(), "--prompt", "the", "--max-new-tokens", "500"},
        "beyond the context");
}

TEST_CASE("generate prints text and a summary, compare prints both modes", "[cli]") {
    const auto g = run_cli({"generate", "--model", tiny_model(), "--prompt", "the cat",
                            "--max-new-tokens", "5", "--backend", "cpu"});
    CHECK(g.exit_code == 0);
    CHECK(g.out.rfind("the cat", 0) == 0);
    CHECK(g.err.find("5 new") != std::string::npos);

    const auto c = run_cli(
        {"compare", "--model", tiny_model(), "--prompt", "the cat", "--max-new-tokens", "20"});
    CHECK(c.exit_code == 0);
    CHECK(c.out.find("ratio") != std::string::npos);
    CHECK(c.out.find("max |logit difference| cached vs uncached over all steps: 0") !=
          std::string::npos);
}

TEST_CASE("generate --trace-json writes the whole trace", "[cli]") {
    const auto path = test::temp_dir("json") / "t.json";
    const auto r = run_cli({"generate", "--model", tiny_model(), "--prompt", "the",
                            "--max-new-tokens", "4", "--trace-json", path.string()});
    REQUIRE(r.exit_code == 0);
    std::ifstream f(path);
    const auto j = nlohmann::json::parse(f);
    CHECK(j.at("steps").size() == 4);
    CHECK(j.at("steps").at(1).at("attention").at("rows") == 1);
}

// What people will type, paste and open (docs/reliability.md). Each is a working run or one line
// and exit 2.
TEST_CASE("any UTF-8, control characters or junk as a prompt: generation runs", "[cli][hostile]") {
    const auto json = test::temp_dir("hostile-json") / "t.json";
    for (const std::string prompt :
         {"\xf0\x9f\x98\x80 \xe4\xbd\xa0\xe5\xa5\xbd cat",  // emoji, Chinese
          "tab\there\r\nbell\x07 esc\x1b[2J",               // control characters
          "\xff\xfe\xc3\x28\xed\xa0\x80\xf5\x80\x80\x80",   // not UTF-8
          "\x01\x02\x03\xc0\xc1\x80\xbf\xf8\xfc\xfe"}) {    // binary junk (argv cannot hold NUL)
        const auto r = run_cli({"generate", "--model", tiny_model(), "--prompt", prompt,
                                "--max-new-tokens", "3", "--trace-json", json.string()});
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.err.find(" 3 new;") != std::string::npos);
        // Like run.c, lone unprintable bytes are not echoed: no escape sequence reaches the
        // terminal.
        CHECK(r.out.find_first_of("\x1b\x07") == std::string::npos);
        std::ifstream f(json);
        CHECK_NOTHROW(nlohmann::json::parse(f));  // valid UTF-8 JSON
    }
}

TEST_CASE("reaching the context ends generation and says so", "[cli][hostile]") {
    // The tiny model's context is 64 tokens; without --max-new-tokens generation runs to it
    // unless the sampled text picks the end token first.
    bool seen = false;
    for (int seed = 1; seed <= 20 && !seen; ++seed) {
        const auto r = run_cli({"generate", "--model", tiny_model(), "--prompt", "the cat",
                                "--temperature", "1", "--seed", std::to_string(seed)});
        REQUIRE(r.exit_code == 0);
        seen = r.err.find("stopped: context full (the model's context is 64 tokens)") !=
               std::string::npos;
    }
    CHECK(seen);
}

TEST_CASE("folders, devices, empty, foreign and oversized files: one line, exit 2",
          "[cli][hostile]") {
    const auto dir = test::temp_dir("hostile-files");
    const std::string tok = tiny_model().substr(0, tiny_model().size() - 4) + ".tok.bin";
    expect_error({"generate", "--model", dir.string()},
                 dir.string() + ": is a folder; give the path of a file in it");
    expect_error({"generate", "--model", tiny_model(), "--tokenizer", dir.string()}, "is a folder");
    expect_error({"lesson", dir.string()}, dir.string() + ": is a folder, not a lesson file");
    // An output that cannot be written fails before the run, not after it.
    for (const auto& out : {dir.string(), (dir / "no/such/folder/t.json").string()}) {
        const auto r =
            run_cli({"generate", "--model", tiny_model(), "--prompt", "the", "--trace-json", out});
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(test::one_line(r.err));
    }
    expect_error({"toy", "--trace-json", dir.string()},
                 dir.string() + ": is a folder; give the name of a file to write");
    expect_error({"generate", "--model", tiny_model(), "--trace-json", "/no/such/folder/t.json"},
                 "/no/such/folder/t.json: cannot write: No such file or directory");
    expect_error({"info", "--model", "/dev/zero"},
                 "/dev/zero: not a regular file (a device, pipe or socket); give a file");

    test::write_file(dir / "empty.bin", {});
    expect_error(
        {"info", "--model", (dir / "empty.bin").string()},
        "empty.bin: 0 bytes, too short for a llama2.c checkpoint's header (needs at least 28)");
    expect_error(
        {"generate", "--model", tiny_model(), "--tokenizer", (dir / "empty.bin").string()},
        "empty.bin: 0 bytes, too short for a llama2.c tokenizer's header (needs at least 4)");
    const std::string text = "<html><body>not a model</body></html>\n";
    test::write_file(dir / "page.bin", std::vector<unsigned char>(text.begin(), text.end()));
    expect_error({"info", "--model", (dir / "page.bin").string()},
                 "not a usable llama2.c checkpoint");
    std::string junk_lesson = "\x89PNG\r\n\x1a\n binary";
    test::write_file(dir / "junk.md",
                     std::vector<unsigned char>(junk_lesson.begin(), junk_lesson.end()));
    expect_error({"lesson", (dir / "junk.md").string()},
                 ":1: a lesson starts with a '# Title' line");

    // A tokenizer made for another model.
    test::write_file(dir / "big.tok.bin", test::synthetic_tokenizer({" "}, 512));
    expect_error(
        {"generate", "--model", tiny_model(), "--tokenizer", (dir / "big.tok.bin").string()},
        "holds 512 tokens, the model needs 300");
    // Huge header values: out of range, and in range but asking for a 256 GiB KV cache.
    auto header_file = [&](const std::string& name, std::vector<std::int32_t> h) {
        std::vector<unsigned char> b(28);
        std::memcpy(b.data(), h.data(), 28);
        test::write_file(dir / name, b);
        return (dir / name).string();
    };
    expect_error({"info", "--model", header_file("dim.bin", {1 << 30, 8, 1, 1, 1, 8, 8}),
                  "--tokenizer", tok},
                 "dim = 1073741824 (must be 1..16384)");
    expect_error({"info", "--model", header_file("kv.bin", {4096, 8, 64, 32, 32, 8, 1 << 17}),
                  "--tokenizer", tok},
                 "needs 262144 MiB, more than kvscope's 4096 MiB");
}

TEST_CASE("user text in an error message is escaped: still one line, no terminal control",
          "[cli][hostile]") {
    const auto r = run_cli({"generate", "--model", "bad\nname\x1b[31m\xff.bin"});
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(test::one_line(r.err));
    CHECK(r.err.find("bad\\x0aname\\x1b[31m\\xff.bin: cannot open") != std::string::npos);
    CHECK(r.err.find('\x1b') == std::string::npos);
    const auto o = run_cli({"generate", "--bo\ngus"});
    CHECK(o.exit_code == 2);
    CHECK(test::one_line(o.err));
}

TEST_CASE("explain: the toy's even head at 'so', as text and JSON, bad choices exit 2",
          "[cli][explain]") {
    auto r = run_cli({"explain", "--model", "toy", "--head", "even", "--row", "so"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    // position (from 1), token, source, q.k, scaled, mask, weight, K, V
    CHECK(r.out.find("the query at position 4 \"so\"") != std::string::npos);
    CHECK(r.out.find(
              "1 \"Today\"      new              -inf       -inf                   0  1, 10") !=
          std::string::npos);
    CHECK(r.out.find(
              "2 \"weather\"    new                 0          0                 0.5  2, 20") !=
          std::string::npos);
    CHECK(
        r.out.find("4 \"so\"         new                 0          0                 0.5  4, 5") !=
        std::string::npos);
    CHECK(r.out.find("output sum_j w_j . v_j = [12.5]") != std::string::npos);
    CHECK(r.out.find("the model's attention output = [12.5]") != std::string::npos);

    r = run_cli({"explain", "--model", "toy", "--head", "even", "--row", "so", "--json"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("head_name") == "even");
    CHECK(j.at("query_piece") == "so");
    CHECK(j.at("row") == 3);
    CHECK(j.at("position") == 4);  // positions from 1, as the text says them
    CHECK(j.at("keys").at(0).at("position") == 1);
    REQUIRE(j.at("keys").size() == 4);
    CHECK(j.at("keys").at(0).at("raw").is_null());  // -inf
    CHECK(j.at("keys").at(1).at("raw") == 0);
    CHECK(j.at("keys").at(1).at("weight") == 0.5);
    CHECK(j.at("keys").at(3).at("weight") == 0.5);
    CHECK(j.at("output").at(0) == 12.5);
    CHECK(j.at("model_output").at(0) == 12.5);

    // A real model, a decode step without the cache: the recomputed rows were compared.
    r = run_cli({"explain", "--model", "default", "--backend", "cpu", "--prompt", "The cat sat",
                 "--step", "2", "--layer", "1", "--head", "3", "--no-cache", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto d = nlohmann::json::parse(r.out);
    CHECK(d.at("phase") == "decode");
    CHECK(d.at("keys").back().at("source") == "new");
    CHECK(d.at("keys").at(0).at("source") == "recomputed");
    CHECK(d.at("why_not_q").at("query_rows_used") == 1);
    CHECK(d.at("why_not_q").at("kv_recomputed_max_delta") == 0);

    expect_error({"explain", "--model", "toy", "--head", "odd"}, "no head 'odd'");
    expect_error({"explain", "--model", "toy", "--row", "rain"},
                 "no query row with the token 'rain'");
    expect_error({"explain", "--model", "toy", "--layer", "1"},
                 "--layer: 1 is out of range (0..0: the model's layers)");
    expect_error({"explain", "--model", "toy", "--head", "4"}, "out of range (0..3)");
    expect_error({"explain", "--model", "toy", "--row", "7"},
                 "step 0 holds the queries at positions 1..4, not position 7");
    expect_error({"explain", "--model", "toy", "--row", "0"}, "--row: 0 is out of range");
    expect_error({"explain", "--model", "toy", "--cache", "compare"}, "one session's row");
    expect_error({"explain", "--model", "toy", "--step", "99"}, "--step: 99 is out of range");
    expect_error({"explain", "--model", "default", "--head", "even"}, "no head 'even'");
}

TEST_CASE("explain: every query row the why-not-Q count names opens, by its position",
          "[cli][explain]") {
    // Without the cache, step 3 computed 8 query rows (7 thrown away at the last layer): the
    // query at position 3 is one of them, and its row is the one the step computed.
    auto r = run_cli({"explain", "--model", "default", "--backend", "cpu", "--prompt",
                      "Once upon a time", "--step", "3", "--layer", "3", "--cache", "off", "--row",
                      "3", "--json"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("step") == 3);
    CHECK(j.at("position") == 3);
    CHECK(j.at("why_not_q").at("query_rows_computed") == 8);
    CHECK(j.at("matrix").at("rows") == 8);
    CHECK(j.at("matrix").at("first_position") == 1);
    // The matrix's row of position 3 is the row's table, cell for cell.
    for (int k = 0; k < 8; ++k) {
        CHECK(j.at("matrix").at("weights").at(2).at(k) == j.at("keys").at(k).at("weight"));
        CHECK(j.at("matrix").at("masked").at(2).at(k) == (k > 2 ? 1 : 0));
    }
    // With the cache the same step computed one row: position 3 is the prefill's, and said so.
    r = run_cli({"explain", "--model", "default", "--backend", "cpu", "--prompt",
                 "Once upon a time", "--step", "3", "--row", "3"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("step 3 holds the query at position 8 only, not position 3 (step 0 "
                     "computed it)") != std::string::npos);

    // Without the causal mask a row has a weight on every key, the ones after it included.
    r = run_cli({"explain", "--model", "default", "--backend", "cpu", "--prompt",
                 "Today's weather is so", "--cache", "bidirectional", "--layer", "1", "--row", "3",
                 "--json"});
    REQUIRE(r.exit_code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j.at("mask") == "bidirectional");
    double after = 0;
    for (const auto& k : j.at("keys")) {
        CHECK(k.at("masked") == false);
        if (k.at("position").get<int>() > 3) after += k.at("weight").get<double>();
    }
    CHECK(after > 0);  // positions 4..6 have weights of their own
    for (const auto& row : j.at("matrix").at("masked"))
        for (const auto& m : row) CHECK(m == 0);
}

TEST_CASE("llama.cpp's spellings: -m -p -n -s -t -c --temp, -f FILE and -f - for the prompt",
          "[cli]") {
    const auto long_form =
        run_cli({"generate", "--model", tiny_model(), "--prompt", "the cat", "--max-new-tokens",
                 "6", "--seed", "7", "--threads", "1", "--context", "32", "--temperature", "0.8",
                 "--top-k", "20", "--top-p", "0.9"});
    REQUIRE(long_form.exit_code == 0);
    const auto short_form =
        run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "-n", "6", "-s", "7", "-t", "1",
                 "-c", "32", "--temp", "0.8", "--top-k", "20", "--top-p", "0.9"});
    CHECK(short_form.exit_code == 0);
    CHECK(short_form.out == long_form.out);
    CHECK(run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "--n-predict", "6", "-s", "7",
                   "--ctx-size", "32", "--temp", "0.8", "--top-k", "20"})
              .out == long_form.out);
    const auto dir = test::temp_dir("prompt-file");
    test::write_file(dir / "p.txt", {'t', 'h', 'e', ' ', 'c', 'a', 't', '\n'});
    CHECK(run_cli({"generate", "-m", tiny_model(), "-f", (dir / "p.txt").string(), "-n", "6", "-s",
                   "7", "-c", "32", "--temp", "0.8", "--top-k", "20"})
              .out == long_form.out);
    const std::string input = "the cat\n";
    CHECK(run_cli({"generate", "-m", tiny_model(), "-f", "-", "-n", "6", "-s", "7", "-c", "32",
                   "--temp", "0.8", "--top-k", "20"},
                  &input)
              .out == long_form.out);
    expect_error({"generate", "-m", tiny_model(), "-p", "x", "-f", "-"}, "--prompt and --file");
    expect_error({"generate", "-m", tiny_model(), "-f", dir.string()}, "--file: ");
    // The older spellings still work: --no-cache is --cache off.
    CHECK(run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "-n", "4", "--no-cache"}).out ==
          run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "-n", "4", "--cache", "off"})
              .out);
    expect_error({"generate", "-m", tiny_model(), "--no-cache", "--cache", "on"}, "disagree");
}

TEST_CASE("kvscope-cli --version answers, and a misspelt option or command gets the nearest name",
          "[cli]") {
    const auto v = run_cli({"--version"});
    CHECK(v.exit_code == 0);
    CHECK(v.out.rfind("kvscope-cli ", 0) == 0);
    CHECK(run_cli({"generate", "--version"}).out == v.out);
    expect_error({"generate", "--max-new-token", "3"},
                 "unknown option '--max-new-token' (did you mean --max-new-tokens?)");
    expect_error({"compare", "--temprature", "1"}, "(did you mean --temperature?)");
    expect_error({"generat"}, "unknown command 'generat' (did you mean generate?)");
    expect_error({"generate", "--frobnicate"}, "unknown option '--frobnicate' (see --help)");
}

TEST_CASE("generate times each step once by default and says how, compare says why it stopped",
          "[cli]") {
    const auto once = run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "-n", "3"});
    CHECK(once.err.find("timed: each step run once") != std::string::npos);
    const auto median =
        run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "-n", "3", "--timing-runs", "3"});
    CHECK(median.err.find("timed: each step under 10 ms as the median of 3 runs") !=
          std::string::npos);
    const auto dir = test::temp_dir("gen-trace");
    const auto traced = run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "-n", "3",
                                 "--trace-json", (dir / "t.json").string()});
    const auto j = nlohmann::json::parse(test::slurp(dir / "t.json"));
    for (const auto& s : j.at("steps")) CHECK(s.at("time").at("runs") == 1);
    CHECK(j.at("recorded").at("program") == "kvscope-cli generate");
    CHECK(j.at("recorded").at("timing_runs") == 1);

    const auto c = run_cli({"compare", "-m", tiny_model(), "-p", "the cat", "-n", "3"});
    CHECK(c.exit_code == 0);
    CHECK(c.out.find("\ntext: " + traced.out.substr(0, traced.out.size() - 1) + "\n") !=
          std::string::npos);
    CHECK(c.out.find("\nstopped: length limit\n") != std::string::npos);
}

TEST_CASE("replay prints a recorded run without its model, and the CLI writes CSV and trace events",
          "[cli][replay]") {
    const auto dir = test::temp_dir("cli-replay");
    const std::string t = (dir / "t.json").string(), e = (dir / "e.json").string(),
                      c = (dir / "s.csv").string(), a = (dir / "a.csv").string();
    const auto g = run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "-n", "4",
                            "--trace-json", t, "--trace-events", e, "--csv", c, "--attention-csv",
                            a, "--layer", "1", "--head", "3"});
    REQUIRE(g.exit_code == 0);
    const auto events = nlohmann::json::parse(test::slurp(e));
    int steps = 0;
    // Metadata events (the process and thread names) carry no "cat".
    for (const auto& ev : events.at("traceEvents")) steps += ev.value("cat", "") == "step";
    CHECK(steps == 4);
    const std::string csv = test::slurp(c);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
    CHECK(test::slurp(a).rfind("position,token,1,", 0) == 0);
    const auto r = run_cli({"replay", t});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("recorded by kvscope-cli generate") == 0);
    // (The tiny model's random text holds bytes that are not UTF-8, which JSON keeps as
    // characters: the text is compared in generate's and compare's test.)
    CHECK(r.out.find("\ntext: the cat") != std::string::npos);
    CHECK(r.out.find("\nstopped: length limit\n") != std::string::npos);
    expect_error({"replay", tiny_model()}, "not a kvscope trace");
    expect_error({"generate", "-m", tiny_model(), "--attention-csv", a, "--layer", "9"},
                 "--layer: 9 is out of range (0..1: the model's layers)");
}

TEST_CASE("make-model names its file for what it holds, and a tokenizer given as the model says so",
          "[cli]") {
    const auto dir = test::temp_dir("cli-names");
    expect_error(
        {"make-model", "--arch", "gpt2", "--shape", "small", "--out", (dir / "g.bin").string()},
        "--arch gpt2 writes a GGUF file: name it " + (dir / "g.gguf").string());
    expect_error({"make-model", "--shape", "small", "--out", (dir / "l.gguf").string()},
                 "--arch llama writes a llama2.c checkpoint");
    CHECK(!fs::exists(dir / "g.bin"));
    const std::string tok = tiny_model().substr(0, tiny_model().size() - 4) + ".tok.bin";
    expect_error({"generate", "--model", tok},
                 "a llama2.c tokenizer (300 pieces), not a model: give the model with --model");
}

TEST_CASE("bench fits 100 columns unless --wide", "[cli][bench]") {
    auto widest = [](const std::string& s) {
        std::size_t w = 0, start = 0;
        for (std::size_t i = 0; i <= s.size(); ++i)
            if (i == s.size() || s[i] == '\n') {
                w = std::max(w, i - start);
                start = i + 1;
            }
        return w;
    };
    const std::vector<std::string> args = {"bench", "-m",        tiny_model(), "--lengths",
                                           "4,8",   "--repeats", "1",          "--warmup",
                                           "0",     "--backend", "cpu"};
    const auto narrow = run_cli(args);
    REQUIRE(narrow.exit_code == 0);
    CHECK(widest(narrow.out) <= 100);
    auto wide_args = args;
    wide_args.push_back("--wide");
    const auto wide = run_cli(wide_args);
    CHECK(wide.exit_code == 0);
    CHECK(widest(wide.out) > 100);
}

TEST_CASE("text files a user writes: a byte order mark is not text, for every reader",
          "[cli][hostile]") {
    const auto dir = test::temp_dir("bom-files");
    auto write = [&](const std::string& name, const std::string& text) {
        test::write_file(dir / name, std::vector<unsigned char>(text.begin(), text.end()));
        return (dir / name).string();
    };
    // -f: the prompt's tokens are those of the text without the mark (not three byte tokens).
    auto tokens_of = [&](const std::string& file) {
        const auto r = run_cli({"generate", "--model", tiny_model(), "-f", file, "--max-new-tokens",
                                "1", "--trace-json", (dir / "t.json").string()});
        REQUIRE(r.exit_code == 0);
        return nlohmann::json::parse(test::slurp(dir / "t.json")).at("tokens");
    };
    CHECK(tokens_of(write("bom.txt", "\xEF\xBB\xBFthe cat\n")) ==
          tokens_of(write("plain.txt", "the cat\n")));
    // A lesson in another encoding than UTF-8: one line naming where.
    expect_error({"lesson", write("latin1.md", "# Title\n\n## Step\n@model toy\ncaf\xE9\n")},
                 "latin1.md:5: not UTF-8 text (byte 0xE9 at byte offset 31); save the lesson as "
                 "UTF-8");
    // A UTF-16 mark (Notepad's "Unicode") is named, for JSON and text files alike.
    expect_error({"replay", write("t16.json", "\xFF\xFE{\0")},
                 "t16.json: UTF-16 text (it starts with a UTF-16 byte order mark); kvscope reads "
                 "UTF-8: save it as UTF-8");
    expect_error({"generate", "--model", tiny_model(), "-f", write("p16.txt", "\xFF\xFEh\0")},
                 "p16.txt: UTF-16 text (it starts with a UTF-16 byte order mark)");
    expect_error({"lesson", write("l16.md", "\xFF\xFE#\0")},
                 "l16.md: UTF-16 text (it starts with a UTF-16 byte order mark)");
}
