// What users throw at the engine: any bytes as a prompt, files that are not what they
// claim, headers with huge values, NaN weights. Every case is a clear one-line kvs::Error or a
// working session, never a crash. (The CLI side of the same cases is in test_cli.cpp.)
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/loaders/checkpoint.h"
#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/session/trace_json.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/utf8.h"
#include "kernels/cpu/cpu_backend.h"
#include "lessonlib/lesson.h"
#include "tests/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {
const Model& tiny() {
    static auto m = open_model(test::write_tiny_model(test::temp_dir("hostile")));
    return *m;
}
std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}
// Prompts people paste, and bytes they should not but will.
const std::vector<std::string>& hostile_prompts() {
    static const std::vector<std::string> p = {
        // emoji with a skin tone, a flag
        "\xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd \xf0\x9f\x87\xa9\xf0\x9f\x87\xaa",
        // Chinese: 你好，世界
        "\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c",
        // control characters
        "tab\there\r\nbell\x07 esc\x1b[2J del\x7f",
        // not UTF-8: stray bytes, a surrogate, beyond U+10FFFF
        "\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1\xed\xa0\x80\xf5\x80\x80\x80",
        // junk without NUL (a prompt cannot hold NUL on the command line)
        std::string("\x01\x02\x03\xc0\xc1\x80\xbf\xf8\xfc\xfe", 10),
    };
    return p;
}
}  // namespace

TEST_CASE("any bytes as a prompt: byte fallback, a working session, valid trace JSON",
          "[hostile]") {
    CpuBackend be;
    for (const auto& prompt : hostile_prompts()) {
        INFO("prompt bytes: " << escape_for_one_line(prompt));
        SessionConfig cfg;
        cfg.max_new_tokens = 3;
        Session s(tiny(), be, cfg);
        s.set_prompt(prompt);
        for (int id : s.tokens()) CHECK((id >= 0 && id < tiny().config().vocab_size));
        // Every byte has a piece of its own: the prompt is one token per byte at most, plus BOS
        // and the leading space, and none of it is <unk>.
        CHECK(s.prompt_len() <= static_cast<int>(prompt.size()) + 2);
        CHECK(std::count(s.tokens().begin(), s.tokens().end(), 0) == 0);
        while (!s.finished()) s.step();
        // The text starts with the prompt's bytes, exactly.
        CHECK(s.text().substr(0, prompt.size()) == prompt);
        std::ostringstream json;
        write_trace_json(json, s);
        // nlohmann rejects invalid UTF-8: stray bytes must be escaped, not copied.
        nlohmann::json j;
        REQUIRE_NOTHROW(j = nlohmann::json::parse(json.str()));
        CHECK(j["prompt_tokens"].size() == static_cast<std::size_t>(s.prompt_len()));
    }
}

TEST_CASE("a prompt longer than the context names the limit; reaching it ends generation",
          "[hostile]") {
    CpuBackend be;
    const int ctx = tiny().config().seq_len;
    Session s(tiny(), be);
    CHECK_THROWS_WITH(s.set_prompt(std::string(3 * ctx, '\xff')),
                      "the prompt is " + std::to_string(3 * ctx + 2) +
                          " tokens, longer than the model's context of " + std::to_string(ctx) +
                          " tokens");
    // A prompt that fills the context leaves room for one new token, chosen from the last
    // position; then the context is full. (Some filler token whose first choice is not the end
    // token makes this deterministic.)
    bool seen = false;
    for (int t = 3; t < 40 && !seen; ++t) {
        std::vector<int> ids(ctx, t);
        ids[0] = BpeTokenizer::kBos;
        s.set_prompt_tokens(ids);
        CHECK(s.max_new_tokens_allowed() == 1);
        s.step();
        REQUIRE(s.finished());
        if (s.finish_reason() == FinishReason::EndToken) continue;
        seen = true;
        CHECK(s.finish_reason() == FinishReason::ContextFull);
        CHECK(s.runner().kv().len == ctx);
        CHECK_THROWS_WITH(s.step(), "generation has finished: the model's context of " +
                                        std::to_string(ctx) + " tokens is full");
    }
    CHECK(seen);
    // Told to generate past the end token, a session always runs to the context limit.
    SessionConfig past;
    past.stop_at_end_token = false;
    past.sampler.temperature = 1.0f;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        past.sampler.seed = seed;
        Session u(tiny(), be, past);
        u.set_prompt("the cat");
        while (!u.finished()) u.step();
        CHECK(u.finish_reason() == FinishReason::ContextFull);
        CHECK(static_cast<int>(u.tokens().size()) == ctx + 1);
        CHECK(u.text().find("<s>") == std::string::npos);  // an end token inside is not text
    }
    // A limit equal to what the context allows also ends as "context full": that is why it stops.
    SessionConfig cfg;
    Session t(tiny(), be, cfg);
    t.set_prompt("the cat");
    SessionConfig exact;
    exact.max_new_tokens = t.max_new_tokens_allowed();
    exact.sampler.temperature = 1.0f;
    for (std::uint64_t seed = 1; seed < 20; ++seed) {
        exact.sampler.seed = seed;
        Session u(tiny(), be, exact);
        u.set_prompt("the cat");
        while (!u.finished()) u.step();
        if (u.finish_reason() == FinishReason::EndToken) continue;
        CHECK(u.finish_reason() == FinishReason::ContextFull);
        CHECK(static_cast<int>(u.tokens().size()) == ctx + 1);
        break;
    }
}

TEST_CASE("messages stay one line: control bytes and broken UTF-8 in user text are escaped",
          "[hostile]") {
    CHECK(escape_for_one_line("a\nb\tc\x1b[31m\x7f") == "a\\x0ab\\x09c\\x1b[31m\\x7f");
    CHECK(escape_for_one_line("\xff\xc3(") == "\\xff\\xc3(");
    // Chinese and emoji are text, not junk.
    const std::string ok = "\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80 caf\xc3\xa9";
    CHECK(escape_for_one_line(ok) == ok);
    // Idempotent, so a message wrapped in another (lesson FILE:LINE) is not escaped twice.
    const std::string once = escape_for_one_line("x\ny\xff");
    CHECK(escape_for_one_line(once) == once);
    const Error e("bad/\npath\x1b]0;title\x07.bin: cannot open");
    CHECK(std::string(e.what()).find_first_of("\n\x1b\x07") == std::string::npos);
    CHECK(std::string(e.what()) == "bad/\\x0apath\\x1b]0;title\\x07.bin: cannot open");
}

TEST_CASE("strict UTF-8: overlong forms, surrogates, beyond U+10FFFF and cut sequences are not",
          "[hostile]") {
    auto len = [](const std::string& s) { return utf8_sequence_length(s, 0); };
    CHECK(len("a") == 1);
    CHECK(len("\xc3\xa9") == 2);
    CHECK(len("\xe4\xbd\xa0") == 3);
    CHECK(len("\xf0\x9f\x98\x80") == 4);
    CHECK(len("\xf4\x8f\xbf\xbf") == 4);  // U+10FFFF, the last code point
    CHECK(len("\xc0\xaf") == 0);          // overlong '/'
    CHECK(len("\xe0\x80\xaf") == 0);      // overlong
    CHECK(len("\xf0\x80\x80\xaf") == 0);  // overlong
    CHECK(len("\xed\xa0\x80") == 0);      // surrogate U+D800
    CHECK(len("\xf4\x90\x80\x80") == 0);  // U+110000
    CHECK(len("\xf5\x80\x80\x80") == 0);
    CHECK(len("\x80") == 0);
    CHECK(len("\xe4\xbd") == 0);  // cut short
}

TEST_CASE("paths that are not files are refused before anything is read", "[hostile]") {
    const auto dir = test::temp_dir("notfiles");
    CHECK(error_of([&] { load_checkpoint(dir.string()); }) ==
          dir.string() + ": is a folder; give the path of a file in it");
    CHECK(error_of([&] { BpeTokenizer::load(dir.string(), 300); }).find("is a folder") !=
          std::string::npos);
    test::write_file(dir / "empty.bin", {});
    CHECK(error_of([&] { load_checkpoint((dir / "empty.bin").string()); }) ==
          (dir / "empty.bin").string() +
              ": not a llama2.c checkpoint: 0 bytes is shorter than the 28-byte header");
    CHECK(error_of([&] {
              BpeTokenizer::load((dir / "empty.bin").string(), 300);
          }).find("shorter than its 4-byte header") != std::string::npos);
    if (fs::exists("/dev/zero")) {
        // Endless: reading it to the 2 GiB limit would take seconds and gigabytes.
        const auto t0 = std::chrono::steady_clock::now();
        CHECK(error_of([] { load_checkpoint("/dev/zero"); }) ==
              "/dev/zero: not a regular file (a device, pipe or socket); give a file");
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
    }
    CHECK(error_of([&] { regular_file_size((dir / "nope.bin").string()); }) ==
          (dir / "nope.bin").string() + ": cannot open: No such file or directory");
}

TEST_CASE("a tokenizer of the wrong size says both sizes", "[hostile]") {
    const auto bigger = test::synthetic_tokenizer({" "}, 512);
    const auto e = error_of([&] { BpeTokenizer::parse(bigger.data(), bigger.size(), 300, "t"); });
    CHECK(e == "t: not a llama2.c tokenizer: holds 512 tokens, the model needs 300");
    auto junk = test::synthetic_tokenizer({" "}, 300);
    junk.insert(junk.end(), {0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff, 1});
    CHECK(error_of([&] { BpeTokenizer::parse(junk.data(), junk.size(), 300, "t"); }) ==
          "t: not a llama2.c tokenizer: 9 bytes of trailing data after the model's 300 tokens");
}

TEST_CASE("a tokenizer with empty pieces keeps BOS first (fuzz_tokenizer_parse)", "[hostile]") {
    // The seed tests/fuzz/corpus/tokenizer_parse/empty-pieces.tok: max length 1, five "" pieces.
    std::vector<unsigned char> b = {1, 0, 0, 0};
    b.resize(4 + 5 * 8, 0);
    const auto t = BpeTokenizer::parse(b.data(), b.size(), -1, "t");
    for (const char* text : {"", "a", "hello"}) {
        const auto ids = t.encode(text);
        REQUIRE(!ids.empty());
        CHECK(ids[0] == BpeTokenizer::kBos);
    }
}

TEST_CASE("huge header values: refused from the header, nothing allocated", "[hostile]") {
    auto header = [](std::vector<std::int32_t> h) {
        std::vector<unsigned char> b(28);
        std::memcpy(b.data(), h.data(), 28);
        return b;
    };
    auto parse = [](const std::vector<unsigned char>& b) {
        return error_of([&] { parse_checkpoint(b.data(), b.size(), "h.bin"); });
    };
    CHECK(parse(header({1 << 30, 8, 1, 1, 1, 8, 8})) ==
          "h.bin: not a usable llama2.c checkpoint: dim = 1073741824 (must be 1..16384)");
    CHECK(parse(header({8, 8, 1, 1, 1, 8, 0x7fffffff})).find("seq_len = 2147483647") !=
          std::string::npos);
    // Every value in range, but a whole-context KV cache of 256 GiB.
    CHECK(parse(header({4096, 8, 64, 32, 32, 8, 1 << 17})) ==
          "h.bin: not a usable llama2.c checkpoint: its KV cache for the whole context (131072 "
          "tokens) needs 262144 MiB, more than kvscope's 4096 MiB");
    // In range and a plausible cache, but the file is only its header.
    CHECK(parse(header({4096, 11008, 32, 32, 32, 32000, 2048})).find("(truncated?)") !=
          std::string::npos);
}

TEST_CASE("NaN and inf weights: generation runs (greedy and sampled), no crash", "[hostile]") {
    // A foreign file of exactly the right size reads as weights that overflow.
    const auto dir = test::temp_dir("nan");
    const ModelConfig c = test::tiny_config();
    for (const float fill :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 3e38f}) {
        auto b = test::synthetic_checkpoint(c);
        for (std::size_t at = 28; at + 4 <= b.size(); at += 4) std::memcpy(&b[at], &fill, 4);
        test::write_file(dir / "w.bin", b);
        test::write_file(dir / "w.tok.bin", test::synthetic_tokenizer({" "}, c.vocab_size));
        const auto m = open_model((dir / "w.bin").string());
        CpuBackend be;
        for (const float temperature : {0.0f, 1.0f}) {
            SessionConfig cfg;
            cfg.max_new_tokens = 4;
            cfg.sampler.temperature = temperature;
            Session s(*m, be, cfg);
            s.set_prompt("hello");
            while (!s.finished()) {
                const StepRecord& r = s.step();
                CHECK((r.token_out >= 0 && r.token_out < c.vocab_size));
            }
            std::ostringstream json;
            write_trace_json(json, s);
            CHECK_NOTHROW(nlohmann::json::parse(json.str()));
        }
    }
}

TEST_CASE("a lesson check nested a hundred thousand deep is refused, not a stack overflow",
          "[hostile]") {
    // Parsing, evaluating and freeing a check recurse per level: a megabyte of "(" would overflow
    // the stack without the bound on a check's length.
    const std::string deep = "# T\n## S\n@expect " + std::string(100000, '(') + "1" +
                             std::string(100000, ')') + " == 1\n";
    CHECK(error_of([&] { parse_lesson(deep, "deep.md"); }) ==
          "deep.md:3: the check is too long: 200003 tokens, at most 500");
    std::string chain = "# T\n## S\n@expect 0";
    for (int i = 0; i < 100000; ++i) chain += "+1";
    chain += " == 100000\n";
    CHECK(error_of([&] {
              parse_lesson(chain, "chain.md");
          }).find("chain.md:3: the check is too long") == 0);
    // A long but reasonable check still parses.
    std::string fine =
        "# T\n## S\n@expect " + std::string(100, '(') + "1" + std::string(100, ')') + " == 1\n";
    CHECK(parse_lesson(fine, "fine.md").steps.size() == 1);
}
