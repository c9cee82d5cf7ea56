// kvscope-cli as a user drives it: help, bad input (one line, exit 2), output.
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/test_helpers.h"

using namespace kvs;
using test::run_cli;

namespace {
std::string tiny_model() {
    static const std::string p = test::write_tiny_model(test::temp_dir("cli-model"));
    return p;
}
bool one_line(const std::string& s) {
    return !s.empty() && s.find('\n') == s.size() - 1;
}
void expect_error(const std::vector<std::string>& args, const std::string& fragment) {
    const auto r = run_cli(args);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
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
    expect_error({"generate", "--model", tiny_model(), "--prompt", "the", "--max-new-tokens",
                  "500"},
                 "beyond the context");
}

TEST_CASE("generate prints text and a summary; compare prints both modes", "[cli]") {
    const auto g = run_cli({"generate", "--model", tiny_model(), "--prompt", "the cat",
                            "--max-new-tokens", "5", "--backend", "cpu"});
    CHECK(g.exit_code == 0);
    CHECK(g.out.rfind("the cat", 0) == 0);
    CHECK(g.err.find("5 new") != std::string::npos);

    const auto c = run_cli({"compare", "--model", tiny_model(), "--prompt", "the cat",
                            "--max-new-tokens", "20"});
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
    CHECK(j["steps"].size() == 4);
    CHECK(j["steps"][1]["attention"]["rows"] == 1);
}
