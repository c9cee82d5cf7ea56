// What users throw at the engine: any bytes as a prompt, files that are not what they
// claim, headers with huge values, NaN weights. Every case is a clear one-line kvs::Error or a
// working session, never a crash. (The CLI side of the same cases is in test_cli.cpp.)
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/files/json_input.h"
#include "core/loaders/checkpoint.h"
#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/session/trace_json.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/utf8.h"
#include "kernels/cpu/cpu_backend.h"
#include "lessonlib/lesson_parser.h"
#include "tests/support/hostile_files.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {
std::vector<unsigned char> bytes_of(const std::string& s) {
    return {s.begin(), s.end()};
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
        Session s(test::shared_tiny_model(), be, cfg);
        s.set_prompt(prompt);
        for (int id : s.tokens())
            CHECK((id >= 0 && id < test::shared_tiny_model().config().vocab_size));
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
        CHECK(j.at("prompt_tokens").size() == static_cast<std::size_t>(s.prompt_len()));
    }
}

TEST_CASE("a prompt longer than the context names the limit, reaching it ends generation",
          "[hostile]") {
    CpuBackend be;
    const int ctx = test::shared_tiny_model().config().seq_len;
    Session s(test::shared_tiny_model(), be);
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
        Session u(test::shared_tiny_model(), be, past);
        u.set_prompt("the cat");
        while (!u.finished()) u.step();
        CHECK(u.finish_reason() == FinishReason::ContextFull);
        CHECK(static_cast<int>(u.tokens().size()) == ctx + 1);
        CHECK(u.text().find("<s>") == std::string::npos);  // an end token inside is not text
    }
    // A limit equal to what the context allows also ends as "context full": that is why it stops.
    SessionConfig cfg;
    Session t(test::shared_tiny_model(), be, cfg);
    t.set_prompt("the cat");
    SessionConfig exact;
    exact.max_new_tokens = t.max_new_tokens_allowed();
    exact.sampler.temperature = 1.0f;
    for (std::uint64_t seed = 1; seed < 20; ++seed) {
        exact.sampler.seed = seed;
        Session u(test::shared_tiny_model(), be, exact);
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
              ": 0 bytes, too short for a llama2.c checkpoint's header (needs at least 28)");
    CHECK(error_of([&] { BpeTokenizer::load((dir / "empty.bin").string(), 300); }) ==
          (dir / "empty.bin").string() +
              ": 0 bytes, too short for a llama2.c tokenizer's header (needs at least 4)");
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

// ---- numbers, depth and names read from model files ------------------------------------------
// Each case runs through the CLI (info, generate; lesson's @model for the depth), as a user
// meets it: exit 2, one line naming the file, the field and the value; never a signal.

namespace {

bool one_line_error(const test::RunResult& r) {
    return r.exit_code == 2 && test::one_line(r.err);
}

// The first line of stderr without "kvscope-cli: error: " and the newline.
std::string message_of(const test::RunResult& r) {
    const std::string prefix = "kvscope-cli: error: ";
    std::string m = r.err.rfind(prefix, 0) == 0 ? r.err.substr(prefix.size()) : r.err;
    if (!m.empty() && m.back() == '\n') m.pop_back();
    return m;
}

}  // namespace

TEST_CASE("ids and counts from a file are range-checked before they index or size anything",
          "[hostile][cli]") {
    // A 100-byte tokenizer.json whose added token's id is negative, at the top of the 64-bit
    // range, huge but positive, or not a whole number. Unchecked, a negative or 2^64-1 id wraps
    // a size to zero and writes past a vector (SIGSEGV), a huge one asks for terabytes ("out of
    // memory"), INT64_MIN makes std::vector throw length_error ("internal error").
    const auto dir = test::temp_dir("hostile-ids");
    int n = 0;
    for (const std::string id : {"-1", "18446744073709551615", "-9223372036854775808", "4000000000",
                                 "1000000000000", "1e300", "2.5", "\"3\""}) {
        INFO("id " << id);
        const std::string text = test::tokenizer_json_with_added_id(id);
        CHECK(text.size() <= 140);
        const auto folder = test::hf_folder_with(dir, "id" + std::to_string(++n),
                                                 {{"tokenizer.bin", ""}, {"tokenizer.json", text}});
        const std::string tok = (folder / "tokenizer.json").string();
        const std::string shown = id == "1e300" ? "1e+300" : id;
        const std::string expect = tok + ": tokenizer.json: added_tokens[0].id = " + shown +
                                   " is not a token id of its 4 vocab and added tokens (an "
                                   "integer from 0 to 3)";
        const std::string gguf = (dir / "out.gguf").string();
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"info", "--model", folder.string()},
              {"generate", "--model", folder.string()},
              {"export", "--model", folder.string(), "--gguf", gguf}}) {
            const auto r = test::run_cli(args);
            INFO(args[0] << ": " << r.err);
            CHECK(r.exit_code == 2);
            CHECK(one_line_error(r));
            CHECK(message_of(r) == expect);
        }
        CHECK(!fs::exists(gguf));
        CHECK(error_of([&] {
                  ByteBpeTokenizer::from_hf_json_text(text, "t.json");
              }).rfind("t.json: tokenizer.json: added_tokens[0].id = " + shown, 0) == 0);
    }
    // The vocabulary's own ids, the same way.
    for (const std::string id : {"-5", "4000000000", "18446744073709551615"}) {
        const std::string text =
            "{\"model\":{\"vocab\":{\"a\":" + id + "}},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}";
        CHECK(error_of([&] { ByteBpeTokenizer::from_hf_json_text(text, "v.json"); }) ==
              "v.json: tokenizer.json: model.vocab[\"a\"] = " + id +
                  " is not a token id of its 1 tokens (an integer from 0 to 0)");
    }
    // Sizes from config.json: negative, beyond 2^30, a float, a string.
    for (const std::string v : {"-16", "4294967312", "16.0", "\"16\"", "[16]"}) {
        const auto folder =
            test::hf_folder_with(dir, "size" + std::to_string(++n),
                                 {{"config.json", test::config_with("hidden_size", v)}});
        const auto r = test::run_cli({"info", "--model", folder.string()});
        INFO(r.err);
        CHECK(one_line_error(r));
        CHECK(message_of(r) == folder.string() +
                                   ": Hugging Face Llama model: config.json: hidden_size = " + v +
                                   " is not a size (an integer from 0 to 1073741824)");
    }
    // What make-model is asked to make: refused from the shapes when it cannot fit, before a
    // byte is written (the llama file would be written until the disk is full) or allocated.
    const auto out = (dir / "big.bin").string();
    auto r = test::run_cli({"make-model", "--out", out, "--dim", "16384", "--hidden", "65536",
                            "--layers", "256", "--heads", "128", "--seq-len", "64"});
    INFO(r.err);
    CHECK(one_line_error(r));
    CHECK(message_of(r).rfind(out + ": needs 4.00 TiB, the file system there has ", 0) == 0);
    CHECK(!fs::exists(out));
    ::setenv("KVSCOPE_MEM_AVAILABLE", "1000000000", 1);
    r = test::run_cli({"make-model", "--arch", "gpt2", "--out", (dir / "g.gguf").string(), "--dim",
                       "4096", "--layers", "64", "--heads", "32", "--seq-len", "256"});
    ::unsetenv("KVSCOPE_MEM_AVAILABLE");
    INFO(r.err);
    CHECK(one_line_error(r));
    CHECK(message_of(r).find(": 48.0 GiB of memory needed, 954 MiB available "
                             "(KVSCOPE_MEM_AVAILABLE)") != std::string::npos);
}

TEST_CASE("JSON nested 100,000 deep in any file of a model folder: refused, no stack overflow",
          "[hostile][cli]") {
    // ~200 KB, under the 1 MiB config limit. nlohmann parses it without recursing, but dump() in
    // a message and copies of a sub-tree recurse once per level and overflow the stack (SIGSEGV)
    // in info, generate, lesson and the window.
    const std::string deep = test::nested_json(100000);
    const auto dir = test::temp_dir("hostile-deep");
    std::string header = "{\"t\":" + deep + "}";
    std::string st(8, '\0');
    for (int i = 0; i < 8; ++i) st[i] = char((std::uint64_t(header.size()) >> (8 * i)) & 0xff);
    struct Case {
        std::string name;
        std::map<std::string, std::string> files;
        std::string file;  // the file the message names
    };
    const std::vector<Case> cases = {
        {"act", {{"config.json", test::config_with("hidden_act", deep)}}, "config.json"},
        {"size", {{"config.json", test::config_with("hidden_size", deep)}}, "config.json"},
        {"unread", {{"config.json", test::config_with("notes", deep)}}, "config.json"},
        {"tok",
         {{"tokenizer.bin", ""},
          {"tokenizer.json", "{\"model\":{\"vocab\":{}},\"pre_tokenizer\":" + deep + "}"}},
         "tokenizer.json"},
        {"index",
         {{"model.safetensors.index.json", "{\"weight_map\":{\"a\":" + deep + "}}"}},
         "model.safetensors.index.json"},
        {"header", {{"model.safetensors", st + header}}, "model.safetensors"},
    };
    for (const Case& c : cases) {
        const auto folder = test::hf_folder_with(dir, c.name, c.files);
        const std::string named =
            c.file == "config.json"
                ? folder.string() + ": config.json"
                : (folder / c.file).string() + (c.file == "model.safetensors"
                                                    ? ": not a usable safetensors file: header"
                                                    : "");
        test::write_file(dir / (c.name + ".md"),
                         bytes_of("# Deep\n\n## Open\n@model " + folder.string() + "\n"));
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"info", "--model", folder.string()},
              {"generate", "--model", folder.string()},
              {"export", "--model", folder.string(), "--gguf", (dir / "out.gguf").string()},
              {"lesson", (dir / (c.name + ".md")).string()}}) {
            INFO(c.name << " " << args[0]);
            const auto r = test::run_cli(args);
            INFO(r.out << r.err);
            CHECK(r.exit_code != 139);
            if (args[0] == "lesson") {  // the lesson reports its step's error and fails
                CHECK(r.exit_code == 1);
                CHECK(r.out.find(named + ": JSON nested more than 64 levels deep") !=
                      std::string::npos);
                continue;
            }
            CHECK(one_line_error(r));
            CHECK(message_of(r).rfind(named + ": JSON nested more than 64 levels deep (at byte ",
                                      0) == 0);
            CHECK(message_of(r).ends_with("); kvscope reads at most 64"));
        }
    }
    // Messages quote a bounded excerpt of a value, whatever it holds.
    nlohmann::json v = nlohmann::json::parse(test::nested_json(60));
    CHECK(json_excerpt(v) == "[[[[...]]]]");
    CHECK(json_excerpt(std::string(1000, 'x')).size() < 50);
}

TEST_CASE("a product of config fields is exact: one past 2^31 does not wrap to a valid shape",
          "[hostile][cli]") {
    // dim 64, 8 heads: head_dim 2^29 + 8 gives 8 x head_dim = 2^32 + 64, which an int product
    // wraps to 64 = hidden_size (signed overflow, UBSan's finding): the contradicting config
    // would load.
    const auto dir = test::temp_dir("hostile-product");
    const std::string model = (dir / "m.bin").string();
    REQUIRE(test::run_cli({"make-model", "--out", model, "--dim", "64", "--hidden", "64",
                           "--layers", "1", "--heads", "8", "--vocab", "300", "--seq-len", "16"})
                .exit_code == 0);
    REQUIRE(test::run_cli({"export", "--model", model, "--hf", (dir / "hf").string()}).exit_code ==
            0);
    auto config = nlohmann::json::parse(test::slurp(dir / "hf" / "config.json"));
    REQUIRE(test::run_cli({"info", "--model", (dir / "hf").string()}).exit_code == 0);
    config["head_dim"] = (1 << 29) + 8;
    test::write_file(dir / "hf" / "config.json", bytes_of(config.dump()));
    for (const char* cmd : {"info", "generate"}) {
        const auto r = test::run_cli({cmd, "--model", (dir / "hf").string()});
        INFO(r.out << r.err);
        CHECK(one_line_error(r));
        CHECK(message_of(r) == (dir / "hf").string() +
                                   ": Hugging Face Llama model: head_dim 536870920 x 8 heads is "
                                   "4294967360, not hidden_size 64");
    }
    // The helpers themselves: exact, or refused by name.
    CHECK(checked_mul(1ull << 32, 1ull << 31, {"f", "a x b"}) == 1ull << 63);
    CHECK_THROWS_WITH(checked_mul(1ull << 32, 1ull << 32, {"f", "a x b"}),
                      "f: a x b: 4294967296 x 4294967296 is more than 18446744073709551615");
    CHECK_THROWS_WITH(checked_add(~0ull, 1, {"f", "a + b"}),
                      "f: a + b: 18446744073709551615 + 1 is more than 18446744073709551615");
    CHECK_THROWS_WITH(checked_int(std::int64_t(-1), 0, 10, {"f", "n"}),
                      "f: n = -1 is not a size (an integer from 0 to 10)");
    CHECK(checked_uint(10, 10, {"f", "n"}) == 10);
}

TEST_CASE("names read from files are file names: no NUL, controls, separators or '..'",
          "[hostile][cli]") {
    // The index names a shard "model.safetensors\0evil": a check for '/' and ".." alone lets the
    // NUL through, and the C library then opens model.safetensors, a file the index does not
    // name.
    const auto dir = test::temp_dir("hostile-names");
    int n = 0;
    for (const auto& [shard, why] : std::vector<std::pair<std::string, std::string>>{
             {"model.safetensors\\u0000evil", "a NUL byte inside"},
             {"model.safetensors\\u0000", "a NUL byte inside"},
             {"model\\u001b[2J.safetensors", "a control character inside"},
             {"..", "a folder"},
             {"../hf/model.safetensors", "a path, not a name"},
             {"..\\\\model.safetensors", "a path, not a name"},
             {"", "empty"}}) {
        INFO(shard);
        const auto folder =
            test::hf_folder_with(dir, std::to_string(++n),
                                 {{"model.safetensors.index.json", test::index_naming(shard)}});
        const auto r = test::run_cli({"info", "--model", folder.string()});
        INFO(r.out << r.err);
        CHECK(one_line_error(r));
        const std::string m = message_of(r);
        CHECK(m.rfind((folder / "model.safetensors.index.json").string() +
                          ": weight_map[\"model.embed_tokens.weight\"] '",
                      0) == 0);
        CHECK(m.ends_with("' is not a file name in " + folder.string() + " (" + why + ")"));
    }
    // A lesson's @model line with a NUL inside: the C library would open the model before it.
    const std::string model = test::write_tiny_model(dir);
    const std::string line = "@model " + model + std::string(1, '\0') + "garbage\n";
    test::write_file(dir / "nul.md",
                     bytes_of("# T\n\n## S\n" + line + "@prompt \"a\"\n@prefill\n"));
    const auto l = test::run_cli({"lesson", (dir / "nul.md").string()});
    INFO(l.out << l.err);
    CHECK(l.exit_code == 1);
    CHECK(l.out.find(model + "\\x00garbage: a NUL byte inside the name; no file can be named so") !=
          std::string::npos);
    CHECK(l.out.find("parameters") == std::string::npos);  // no model was opened
    CHECK_THROWS_WITH(check_file_name(std::string("a\0b", 3), {"i.json", "x"}, "d"),
                      "i.json: x 'a\\x00b' is not a file name in d (a NUL byte inside)");
    CHECK_NOTHROW(check_file_name("model-00001-of-00002.safetensors", {"i.json", "x"}, "d"));
}

TEST_CASE("an output to a device or a pipe that was written whole is a success",
          "[hostile][cli][output]") {
    // A summary that asks a device's size as if it were a file's fails after every byte was
    // written (exit 2, "/dev/null: not a regular file").
    const auto dir = test::temp_dir("hostile-outputs");
    const std::string model = test::write_tiny_model(dir);
    const auto file =
        test::run_cli({"export", "--model", model, "--gguf", (dir / "m.gguf").string()});
    REQUIRE(file.exit_code == 0);
    const std::size_t size = fs::file_size(dir / "m.gguf");
    const auto null = test::run_cli({"export", "--model", model, "--gguf", "/dev/null"});
    INFO(null.err);
    CHECK(null.exit_code == 0);
    CHECK(null.err.empty());
    CHECK(null.out.find("/dev/null: GGUF v3, llama, F32 matrices, ") == 0);
    CHECK(null.out.find("to a device or pipe (all written; its size there cannot be read back)") !=
          std::string::npos);
    // A FIFO read by another process: the same bytes as the file.
    const std::string fifo = (dir / "fifo").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string cmd =
        "cat " + test::quote(fifo) + " > " + test::quote((dir / "via.gguf").string()) + " & " +
        test::quote(KVSCOPE_CLI) + " export --model " + test::quote(model) + " --gguf " +
        test::quote(fifo) + " >/dev/null 2>&1; rc=$?; wait; exit $rc";
    CHECK(std::system(cmd.c_str()) == 0);
    CHECK(test::slurp(dir / "via.gguf") == test::slurp(dir / "m.gguf"));
    // Its own stdout, piped on: the GGUF bytes alone there, the summary on stderr.
    const std::string piped = test::quote(KVSCOPE_CLI) + " export --model " + test::quote(model) +
                              " --gguf /dev/stdout 2>" + test::quote((dir / "err").string()) +
                              " | cat > " + test::quote((dir / "piped.gguf").string());
    CHECK(std::system(piped.c_str()) == 0);
    CHECK(fs::file_size(dir / "piped.gguf") == size);
    CHECK(test::slurp(dir / "err").find("/dev/stdout: GGUF v3") == 0);
    // /dev/full is still a failure (every write checked).
    const auto full = test::run_cli({"export", "--model", model, "--gguf", "/dev/full"});
    CHECK(one_line_error(full));
    CHECK(message_of(full) == "/dev/full: write failed: No space left on device");
}

TEST_CASE("code points that reorder or hide text are escaped in every message",
          "[hostile][cli][escape]") {
    // A right-to-left override from a config value reached the error line as it was: the
    // terminal showed the rest of the line reversed.
    const auto dir = test::temp_dir("hostile-bidi");
    const auto folder = test::hf_folder_with(
        dir, "bidi",
        {{"config.json",
          test::config_with("architectures", "[\"Llama\\u202eevil\\u200bForCausalLM\"]")}});
    const auto r = test::run_cli({"info", "--model", folder.string()});
    INFO(r.err);
    CHECK(one_line_error(r));
    CHECK(message_of(r) == folder.string() +
                               ": Hugging Face Llama model: architecture "
                               "'Llama\\u202eevil\\u200bForCausalLM' is not supported (kvscope "
                               "runs LlamaForCausalLM, Qwen2ForCausalLM and GPT2LMHeadModel)");
    CHECK(r.err.find("\xe2\x80\xae") == std::string::npos);
}

// A lesson's 100 KB word (a directive name, a panel, a metric, a @cache mode) or an option's
// 100 KB value was quoted whole: a 100 KB error line on the terminal and in the lesson panel.
TEST_CASE("a message quoting a huge value is bounded: its start and its end kept",
          "[hostile][cli][escape]") {
    const std::string huge(100000, 'y');
    const auto bounded = [](const std::string& m) {
        return m.size() <= kMaxMessageBytes + 64 &&
               m.find(" bytes left out] ... ") != std::string::npos;
    };
    for (const std::string& line :
         {"@" + huge, "@show " + huge, "@cache " + huge, "@expect " + huge + " == 1"}) {
        const std::string m = error_of([&] { parse_lesson("# T\n## S\n" + line + "\n", "l.md"); });
        INFO(m.substr(0, 200));
        CHECK(m.starts_with("l.md:3: "));
        CHECK(bounded(m));
    }
    CHECK(error_of([&] {
              parse_lesson("# T\n## S\n@" + huge + "\n", "l.md");
          }).starts_with("l.md:3: unknown directive '@yyyy"));
    // The end of the message survives the cut: the hint after the value.
    const std::string m =
        error_of([&] { parse_lesson("# T\n## S\n@show " + huge + "\n", "l.md"); });
    CHECK(m.find("(panels: ") != std::string::npos);
    // A UTF-8 character is never cut in two.
    std::string chinese;
    for (int i = 0; i < 20000; ++i) chinese += "\xe4\xb8\xad";  // U+4E2D
    const std::string han = Error("x" + chinese).what();
    CHECK(han.size() <= kMaxMessageBytes + 64);
    for (std::size_t i = 0; i < han.size();) {
        const std::size_t n = utf8_sequence_length(han, i);
        REQUIRE(n > 0);
        i += n;
    }
    // Through the CLI: an option's value, one bounded line.
    const auto r = test::run_cli({"serve", "--prompts", "x", "--cache-type", huge});
    INFO(r.err.substr(0, 200));
    CHECK(one_line_error(r));
    CHECK(bounded(message_of(r)));
}

TEST_CASE("a JSON syntax error says where: byte, line and column, a bounded excerpt, one line",
          "[hostile][json]") {
    auto problem = [](const std::string& text) {
        try {
            parse_json_input(text, "f.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        FAIL("accepted: " << text);
        return std::string();
    };
    CHECK(problem("{\n  \"a\": 1,\n  \"b\": [1, 2,, 3]\n}") ==
          "f.json: not valid JSON at byte 25 (line 3, column 14): unexpected ','; expected '[', "
          "'{', or a literal; near '  \"b\": [1, 2,,'");
    CHECK(problem("") ==
          "f.json: not valid JSON at byte 0 (line 1, column 1): unexpected end of input; "
          "expected '[', '{', or a literal; the input is empty");
    CHECK(problem("{\"a\": 1e999}") ==
          "f.json: not valid JSON: a number beyond a double's range ('1e999')");
    std::string digits(100002, '9');  // [999...9]
    digits.front() = '[';
    digits.back() = ']';
    CHECK(problem(digits) == "f.json: not valid JSON: a number beyond a double's range ('" +
                                 std::string(40, '9') + "...')");
    // A megabyte-long string, then a control byte inside it: the excerpt is at most 40 bytes of
    // that line, escaped, and the message one line.
    const std::string long_value = "{\"k\": \"" + std::string(1 << 20, 'x') + "\x1b[2J\xe4\xb8";
    const std::string m = problem(long_value);
    INFO(m);
    const std::size_t esc = long_value.find('\x1b');  // a control byte inside a string
    CHECK(m.starts_with("f.json: not valid JSON at byte " + std::to_string(esc) +
                        " (line 1, column " + std::to_string(esc + 1) + "): invalid string: "));
    CHECK(m.ends_with("xxxx\\x1b'"));
    CHECK(m.size() < 300);
    CHECK(m.find('\n') == std::string::npos);
    CHECK(m.find('\x1b') == std::string::npos);
    // A NUL byte: nlohmann takes it for the end of the input, so junk after one was accepted.
    using namespace std::string_literals;
    CHECK(problem("{\"a\": 1}\0junk after a NUL"s) ==
          "f.json: a NUL byte at byte 8: not JSON text (JSON holds none; what follows it would "
          "not be read)");
    CHECK(problem("\xEF\xBB\xBF{\"a\": \"x\0y\"}"s).starts_with("f.json: a NUL byte at byte 11:"));
}

TEST_CASE("a short, empty or foreign file is refused naming the format it was opened as",
          "[hostile][formats]") {
    const auto dir = test::temp_dir("formats");
    const std::string tiny_path = test::write_tiny_model(test::temp_dir("formats-tiny"));
    auto file = [&](const std::string& name, const std::string& bytes) {
        test::write_file(dir / name, bytes_of(bytes));
        return (dir / name).string();
    };
    auto model_error = [&](const std::string& path, const std::string& tok = "") {
        return error_of([&] { open_model(path, tok); });
    };
    // By name: what the name promises is named, with what was found.
    const std::string g3 = file("three.gguf", "GGU");
    CHECK(model_error(g3) == g3 + ": 3 bytes, too short for a GGUF header (needs at least 24)");
    const std::string g0 = file("empty.gguf", "");
    CHECK(model_error(g0) == g0 + ": 0 bytes, too short for a GGUF header (needs at least 24)");
    const std::string gx = file("junk.gguf", "PK\x03\x04" + std::string(60, 'z'));
    CHECK(model_error(gx) ==
          gx + ": named as a GGUF file, but it starts with \"PK\\x03\\x04\", not \"GGUF\"; as a "
               "llama2.c checkpoint: not a usable llama2.c checkpoint: dim = 67324752 (must be "
               "1..16384)");
    // By content: GGUF bytes named .bin are GGUF, and too short for its header.
    const std::string gb = file("gguf.bin", std::string("GGUF\x03\0\0\0", 8));
    CHECK(model_error(gb) == gb + ": 8 bytes, too short for a GGUF header (needs at least 24)");
    const std::string b1 = file("one.bin", "x");
    CHECK(model_error(b1) ==
          b1 + ": 1 byte, too short for a llama2.c checkpoint's header (needs at least 28)");
    const std::string tjson = file("t.json", "{}");
    CHECK(model_error(tjson).find(tjson + ": a JSON file, not a model") == 0);
    CHECK(model_error(file("tokenizer.model", ""))
              .find("a SentencePiece tokenizer.model, not a model") != std::string::npos);
    // Tokenizers: a Hugging Face tokenizer or a GGUF file beside a llama2.c checkpoint.
    const std::string tj = file("tokenizer.json", "{}");
    CHECK(model_error(tiny_path, tj) ==
          tj + ": a Hugging Face tokenizer (.json), which kvscope reads with a Hugging Face model "
               "folder; a llama2.c checkpoint takes a llama2.c tokenizer .bin");
    CHECK(model_error(tiny_path, g3).find(g3 + ": a GGUF file as the tokenizer") == 0);
    // A safetensors file shorter than its header's length, in a model folder.
    const fs::path hf = test::hf_folder_with(dir, "hf", {{"model.safetensors", "abc"}});
    CHECK(
        model_error(hf.string())
            .find(
                "model.safetensors: 3 bytes, too short for a safetensors header's length (needs at "
                "least 8)") != std::string::npos);
}
