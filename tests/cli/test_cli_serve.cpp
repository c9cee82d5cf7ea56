// kvscope-cli serve as a user drives it: every request's text equal to generate's, the summary's
// figures, and bad input (one line, exit 2).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>

#include "core/loaders/model_loader.h"
#include "core/util/format.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using test::run_cli;
using test::tiny_model;
namespace fs = std::filesystem;

namespace {
fs::path prompts_file(const std::vector<std::string>& lines, const std::string& name) {
    static const fs::path dir = test::temp_dir("serve-prompts");
    std::ofstream f(dir / name, std::ios::binary);
    for (const auto& l : lines) f << l << "\n";
    return dir / name;
}
void expect_error(const std::vector<std::string>& args, const std::string& fragment) {
    const auto r = run_cli(args);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(test::one_line(r.err));
    CHECK(r.err.find(fragment) != std::string::npos);
}
// The number after `label` in the summary line.
double figure(const std::string& summary, const std::string& label) {
    std::smatch m;
    REQUIRE(std::regex_search(summary, m, std::regex(label + ":? ([0-9.]+)")));
    return std::stod(m[1]);
}
}  // namespace

TEST_CASE("serve prints every request as generate prints it alone", "[cli][serving]") {
    // Eight prompts sharing one prefix of at least 20 tokens (checked with the tokenizer).
    const std::string prefix = "the cat sat by a red mat in the hat ";
    const std::vector<std::string> ends{"a", "the cat", "in", "at the", "he", "cat at", "e", "tin"};
    std::vector<std::string> prompts;
    for (const auto& e : ends) prompts.push_back(prefix + e);
    const auto model = open_model(tiny_model());
    const auto first = model->tokenizer().encode(prompts[0]);
    for (const auto& p : prompts) {
        const auto ids = model->tokenizer().encode(p);
        const auto common = std::mismatch(first.begin(), first.end(), ids.begin(), ids.end());
        REQUIRE(common.first - first.begin() >= 20);
    }
    const fs::path file = prompts_file(prompts, "eight.txt");
    const auto r = run_cli(
        {"serve", "--model", tiny_model(), "--prompts", file.string(), "--max-new-tokens", "10"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    std::string expected;
    for (const auto& p : prompts) {
        const auto g =
            run_cli({"generate", "--model", tiny_model(), "--prompt", p, "--max-new-tokens", "10"});
        REQUIRE(g.exit_code == 0);
        expected += g.out;
    }
    CHECK(r.out == expected);
    CHECK(test::one_line(r.err));
    CHECK(figure(r.err, "prefix blocks shared") > 0);
    const double peak = figure(r.err, "peak blocks used");
    std::smatch m;
    REQUIRE(std::regex_search(r.err, m, std::regex("= ([0-9]+) blocks")));
    CHECK(peak < std::stod(m[1]));
    CHECK(figure(r.err, "blocks in the pool") == 32);  // 8 requests x 64 rows / 16
    CHECK(r.err.find("internal fragmentation: ") != std::string::npos);
    CHECK(r.err.find("tokens per second") != std::string::npos);

    // Without sharing: the same texts, nothing shared.
    const auto apart =
        run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "--max-new-tokens",
                 "10", "--no-prefix-caching", "--block-size", "5", "--max-num-seqs", "3"});
    CHECK(apart.exit_code == 0);
    CHECK(apart.out == expected);
    CHECK(figure(apart.err, "prefix blocks shared") == 0);
    // A pool too small for all at once: queued and preempted, the texts unchanged.
    const auto tight =
        run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "--max-new-tokens",
                 "10", "--block-size", "4", "--pool-blocks", "20"});
    INFO("tight: " << tight.err);
    CHECK(tight.exit_code == 0);
    CHECK(tight.out == expected);
    CHECK(figure(tight.err, "peak blocks used") <= 20);
    CHECK(figure(tight.err, "queued") + figure(tight.err, "preempted") > 0);
}

TEST_CASE("serve samples each request as generate samples it alone", "[cli][serving]") {
    const std::vector<std::string> prompts{"the cat sat", "the cat at the", "a hat"};
    const fs::path file = prompts_file(prompts, "sampled.txt");
    const std::vector<std::string> sampler{"--max-new-tokens", "12", "--temp", "0.8",
                                           "--seed",           "7"};
    std::vector<std::string> args{"serve",     "--model",       tiny_model(),
                                  "--prompts", file.string(),   "--block-size",
                                  "2",         "--pool-blocks", "14"};
    args.insert(args.end(), sampler.begin(), sampler.end());
    const auto r = run_cli(args);
    REQUIRE(r.exit_code == 0);
    std::string expected;
    for (const auto& p : prompts) {
        std::vector<std::string> g{"generate", "--model", tiny_model(), "--prompt", p};
        g.insert(g.end(), sampler.begin(), sampler.end());
        expected += run_cli(g).out;
    }
    CHECK(r.out == expected);
}

TEST_CASE("serve's bad input is one line and exit code 2", "[cli][serving]") {
    const fs::path ok = prompts_file({"the cat"}, "ok.txt");
    expect_error({"serve", "--model", tiny_model()}, "--prompts FILE is required");
    expect_error({"serve", "--model", tiny_model(), "--prompts", "/nonexistent.txt"},
                 "/nonexistent.txt");
    expect_error({"serve", "--model", tiny_model(), "--prompts",
                  prompts_file({"", "\r"}, "blank.txt").string()},
                 "no prompts in the file");
    expect_error(
        {"serve", "--model", tiny_model(), "--prompts", prompts_file({}, "empty.txt").string()},
        "no prompts in the file");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(), "--block-size", "0"},
                 "--block-size");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(), "--block-size", "65"},
                 "block size 65 (must be 1..64, the model's context)");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(), "--pool-blocks", "1",
                  "--max-new-tokens", "30"},
                 "more than the pool's 1");
    expect_error({"serve", "--model", tiny_model(), "--prompts",
                  prompts_file({"the cat", std::string(100, 'x')}, "long.txt").string()},
                 "request 2: the prompt is");
    expect_error(
        {"serve", "--model", tiny_model(), "--prompts", ok.string(), "--max-num-seqs", "65"},
        "--max-num-seqs");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(), "--window", "0"},
                 "--window: 0 is out of range");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(), "--sinks", "2"},
                 "--sinks N needs --window N");
    expect_error(
        {"serve", "--model", tiny_model(), "--prompts", ok.string(), "--cache-type", "int4"},
        "--cache-type: 'int4' is not one of f32, int8, fp8");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(),
                  "--max-num-batched-tokens", "0"},
                 "--max-num-batched-tokens: 0 is out of range");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(),
                  "--max-num-batched-tokens", "8", "--block-size", "16"},
                 "a token budget of 8 rows a step, less than one block of 16 rows");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(), "--window", "40",
                  "--sinks", "4", "--block-size", "8", "--pool-blocks", "6"},
                 "a window of 40 rows and 4 sinks needs 8 blocks of 8 rows, more than the "
                 "pool's 6");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(), "--window", "8",
                  "--sink-positions", "middle"},
                 "--sink-positions: 'middle' is not one of cache, original");
    expect_error(
        {"serve", "--model", tiny_model(), "--prompts", ok.string(), "--sink-positions", "cache"},
        "--sink-positions needs --window N");
    expect_error(
        {"serve", "--model", tiny_model(), "--prompts", ok.string(), "--cache-scales", "tensor"},
        "--cache-scales needs --cache-type int8 or fp8");
    expect_error({"serve", "--model", tiny_model(), "--prompts", ok.string(), "--cache-type",
                  "int8", "--cache-scales", "block"},
                 "--cache-scales: 'block' is not one of token, tensor, channel");
}

TEST_CASE("serve under a token budget chunks prompts and prints what generate prints",
          "[cli][serving]") {
    const std::vector<std::string> prompts{"the cat sat by a red mat in the hat and the cat",
                                           "a hat", "the cat at the hat in the mat"};
    const fs::path file = prompts_file(prompts, "budget.txt");
    std::string expected;
    for (const auto& p : prompts)
        expected += run_cli({"generate", "--model", tiny_model(), "--prompt", p, "-n", "10"}).out;
    const auto r = run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "-n",
                            "10", "--block-size", "4", "--max-num-batched-tokens", "4"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == expected);
    CHECK(figure(r.err, "steps with a prompt chunk") > 0);
    CHECK(r.err.find("token budget 4 a step") != std::string::npos);
    CHECK(figure(r.err, "budget") > 0);  // steps spent waiting for the budget
}

TEST_CASE("serve keeps a prefix after its request: a later arrival finds it", "[cli][serving]") {
    // The second prompt arrives at step 40, after the first has finished.
    const fs::path file = prompts_file({"@0 the cat sat by a red mat in the hat and",
                                        "@40 the cat sat by a red mat in the hat ran"},
                                       "late.txt");
    const auto r = run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "-n", "8",
                            "--block-size", "4"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(figure(r.err, "prefix blocks shared") > 0);
    const auto none = run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "-n",
                               "8", "--block-size", "4", "--no-prefix-caching"});
    CHECK(figure(none.err, "prefix blocks shared") == 0);
    CHECK(none.out == r.out);
}

TEST_CASE("serve with a window past the context measures StreamingLLM's comparison",
          "[cli][serving]") {
    const fs::path file = prompts_file({"the cat sat", "a hat"}, "stream.txt");
    const auto r = run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "-n",
                            "100", "--block-size", "4", "--window", "12", "--sinks", "4"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 3);  // summary, window, perplexity
    CHECK(r.err.find("(cache positions)") != std::string::npos);
    CHECK(r.err.find("perplexity within the context / past it") != std::string::npos);
    CHECK(figure(r.err, "4 sinks at cache positions") > 1);
}

TEST_CASE("serve runs its paged cache on the emulated CUDA backend as generate runs there",
          "[cli][serving][kv_quant]") {
    // The block table's gathers and scatters are the backend's copies (and, for a compact cache,
    // its uploads and downloads), so the CUDA-shaped backend serves the same texts as it
    // generates them.
    const std::vector<std::string> prompts{"the cat sat", "the cat at the", "a hat"};
    const fs::path file = prompts_file(prompts, "emulated.txt");
    std::string expected;
    for (const auto& p : prompts) {
        const auto g = run_cli({"generate", "--model", tiny_model(), "--prompt", p,
                                "--max-new-tokens", "8", "--backend", "cuda-emulated"});
        REQUIRE(g.exit_code == 0);
        expected += g.out;
    }
    const auto f32 =
        run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "--max-new-tokens",
                 "8", "--block-size", "3", "--backend", "cuda-emulated"});
    INFO("f32: " << f32.err);
    CHECK(f32.exit_code == 0);
    CHECK(f32.out == expected);
    for (const char* type : {"int8", "fp8"}) {
        const auto q = run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(),
                                "--max-new-tokens", "8", "--block-size", "3", "--cache-type", type,
                                "--backend", "cuda-emulated"});
        INFO(type << ": " << q.err);
        CHECK(q.exit_code == 0);
        CHECK(std::count(q.out.begin(), q.out.end(), '\n') == 3);
        CHECK(q.err.find(std::string(type) + " KV cache") != std::string::npos);
    }
}

TEST_CASE(
    "serve with an int8 or fp8 cache: every request finishes, the pool shrinks, the effect "
    "is measured",
    "[cli][serving][kv_quant]") {
    const std::vector<std::string> prompts{"the cat sat", "the cat at the", "a hat"};
    const fs::path file = prompts_file(prompts, "quantised.txt");
    const auto model = open_model(tiny_model());
    const ModelConfig& c = model->config();
    // Counted from the shapes: K and V x layers x kv_dim x 4 bytes a row in float32, x (kv_dim
    // bytes + a 4-byte scale) quantised; the pool is 8 x 64 / 16 = 32 blocks of 16 rows.
    const std::size_t f32_row = std::size_t(2) * c.n_layers * c.kv_dim() * 4,
                      q_row = std::size_t(2) * c.n_layers * (c.kv_dim() + 4);
    const auto f32 = run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "-n",
                              "12", "--cache-type", "f32"});
    REQUIRE(f32.exit_code == 0);
    CHECK(f32.err.find(std::string("16 rows (") + format_bytes(double(f32_row) * 32 * 16) + ")") !=
          std::string::npos);
    CHECK(test::one_line(f32.err));  // no effect line for float32
    for (const char* t : {"int8", "fp8"}) {
        INFO(t);
        const auto r = run_cli({"serve", "--model", tiny_model(), "--prompts", file.string(), "-n",
                                "12", "--cache-type", t});
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);  // every request printed
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 2);  // the summary and the effect
        CHECK(r.err.find(std::string(t) + " KV cache") != std::string::npos);
        CHECK(r.err.find(std::string("blocks in the pool: 32 of 16 rows (") +
                         format_bytes(double(q_row) * 32 * 16) + ")") != std::string::npos);
        CHECK(figure(r.err, "takes") == q_row);
        CHECK(figure(r.err, "f32") == f32_row);
        const double diff = figure(r.err, "max \\|logit difference\\|");
        CHECK(diff > 0);
        CHECK(diff < 2);
        CHECK(figure(r.err, "the same most likely next token at") > 0);
    }
}

TEST_CASE(
    "serve reads arrival steps (a line @N text joins at step N), each text as generate prints it",
    "[cli][serving]") {
    const fs::path file =
        prompts_file({"@5 the cat sat", "", "a hat", "@0 @the mat", "@16777216 "}, "arrive.txt");
    // The last line: "@16777216 " is an arrival with an empty prompt, refused.
    expect_error({"serve", "--model", tiny_model(), "--prompts", file.string()},
                 "arrive.txt line 5: ");
    const fs::path ok = prompts_file({"@5 the cat sat", "", "a hat", "@0 @the mat"}, "arrive2.txt");
    const auto r = run_cli({"serve", "--model", tiny_model(), "--prompts", ok.string(), "-n", "6"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    std::string expected;
    for (const char* p : {"the cat sat", "a hat", "@the mat"})
        expected += run_cli({"generate", "--model", tiny_model(), "--prompt", p, "-n", "6"}).out;
    CHECK(r.out == expected);
}
