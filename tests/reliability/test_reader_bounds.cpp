// Readers size from data, not claims: a small file of each kind that claims a huge shape (a
// trace's attention rows and K/V rows, GGUF counts and dimensions, a safetensors tensor, a
// tokenizer.json id) is refused in one line by the CLI, whose peak resident memory (wait4's
// rusage of that process) stays small: nothing is allocated for a shape before the file is seen
// to hold the data that fill it.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/files/safetensors_file.h"
#include "tests/support/hostile_files.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Far above what refusing a small file costs (about 10 MiB plain), far below what sizing from
// the claims below would (a gigabyte for the trace's attention rows). ASan's shadow memory and
// quarantine make every figure larger in the sanitized build.
#ifdef KVSCOPE_SANITIZED
constexpr long kBoundKib = 256 * 1024;
#else
constexpr long kBoundKib = 64 * 1024;
#endif

void refused_small(const std::vector<std::string>& args, const std::string& words) {
    const test::RunResult r = test::run_cli_measured(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(words) != std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
    CHECK(r.peak_rss_kib > 0);
    CHECK(r.peak_rss_kib < kBoundKib);
}

void write(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
}

template <class T>
void put(std::string& b, T v) {
    char raw[sizeof v];
    std::memcpy(raw, &v, sizeof v);
    b.append(raw, sizeof v);
}

void put_str(std::string& b, const std::string& s) {
    put<std::uint64_t>(b, s.size());
    b += s;
}

}  // namespace

TEST_CASE("a trace claiming huge attention or K/V rows is refused before they are allocated",
          "[trace][replay][hostile][bounds]") {
    const auto dir = test::temp_dir("bounds-trace");
    const std::string model = test::write_tiny_model(dir);
    const std::string t = (dir / "t.json").string();
    REQUIRE(test::run_cli({"generate", "--model", model, "--prompt", "a", "--max-new-tokens", "1",
                           "--trace-json", t})
                .exit_code == 0);
    const json good = json::parse(test::slurp(t));
    // 2 layers x 1024 heads of 16 over 512 positions: the prefill's attention rows would be
    // 2 x 1024 x (512 x 513 / 2) floats (1 GiB), its K/V rows 2 x 2 x 512 x 16384 (128 MiB).
    auto claiming = [&](const std::string& payload) {
        json j = good;
        const int L = 2, H = 1024, T = 512, hd = 16;
        j["model"].update({{"dim", H * hd},
                           {"n_layers", L},
                           {"n_heads", H},
                           {"n_kv_heads", H},
                           {"head_dim", hd},
                           {"seq_len", T},
                           {"parameters", 1000}});
        j["prompt_tokens"] = std::vector<int>(T, 1);
        j["tokens"] = std::vector<int>(T, 1);
        j["tokens"].push_back(j["steps"][0]["token_out"]);
        j["token_pieces"] = std::vector<std::string>(T + 1, "a");
        json s = j["steps"][0];
        j["steps"] = json::array();
        s["new_tokens"] = std::vector<int>(T, 1);
        s["tokens_processed"] = T;
        s["kv"].update({{"n_layers", L},
                        {"len", T},
                        {"capacity", T},
                        {"n_kv_heads", H},
                        {"head_dim", hd},
                        {"bytes", 2.0 * L * T * H * hd * 4}});
        for (const char* k :
             {"attention", "q_rows", "attn_out", "projections", "ops", "logits", "kv_rows"})
            s.erase(k);
        // Every layer and head present, each with one short row of the 512 claimed.
        if (payload == "attention")
            s["attention"] = {{"q_pos0", 0},
                              {"rows", T},
                              {"weights", json(L, json(H, json::array({json::array({1})})))}};
        else
            s["kv_rows"] = {{"rows", T}, {"values", {1}}};
        j["steps"].push_back(s);
        const std::string path = (dir / (payload + ".json")).string();
        write(path, j.dump());
        REQUIRE(fs::file_size(path) < 32 * 1024);
        return path;
    };
    refused_small({"replay", claiming("attention")},
                  "steps[0].attention.weights[0][0]: not [rows]");
    refused_small({"replay", claiming("kv_rows")},
                  "steps[0].kv_rows.values: not an array of 33554432 numbers");
}

TEST_CASE("GGUF files claiming huge counts and dimensions are refused before they are allocated",
          "[gguf][hostile][bounds]") {
    const auto dir = test::temp_dir("bounds-gguf");
    auto header = [](std::uint64_t tensors, std::uint64_t kvs) {
        std::string b = "GGUF";
        put<std::uint32_t>(b, 3);
        put(b, tensors);
        put(b, kvs);
        return b;
    };
    // 2^40 metadata entries in 24 bytes.
    write(dir / "kv.gguf", header(0, std::uint64_t(1) << 40) + std::string(64, '\0'));
    refused_small({"info", "--model", (dir / "kv.gguf").string()},
                  "1099511627776 metadata entries cannot fit");
    // An array of 2^40 strings in a key's value.
    std::string arr = header(0, 1);
    put_str(arr, "tokenizer.ggml.tokens");
    put<std::uint32_t>(arr, 9);  // ARRAY
    put<std::uint32_t>(arr, 8);  // of STRING
    put<std::uint64_t>(arr, std::uint64_t(1) << 40);
    write(dir / "arr.gguf", arr + std::string(64, '\0'));
    refused_small({"info", "--model", (dir / "arr.gguf").string()}, "arr.gguf");
    // A 65536 x 65536 float32 tensor (16 GiB) whose data the file does not hold.
    std::string big = header(1, 1);
    put_str(big, "general.architecture");
    put<std::uint32_t>(big, 8);  // STRING
    put_str(big, "llama");
    put_str(big, "token_embd.weight");
    put<std::uint32_t>(big, 2);
    put<std::uint64_t>(big, 65536);
    put<std::uint64_t>(big, 65536);
    put<std::uint32_t>(big, 0);  // F32
    put<std::uint64_t>(big, 0);
    big.resize((big.size() + 31) / 32 * 32, '\0');
    write(dir / "big.gguf", big + std::string(1024, '\0'));
    refused_small({"info", "--model", (dir / "big.gguf").string()}, "big.gguf");
}

TEST_CASE("a safetensors header claiming a huge tensor is refused before it is allocated",
          "[hf][hostile][bounds]") {
    const auto dir = test::temp_dir("bounds-st");
    // The good folder's config, and a header whose embedding is 65536 x 65536 float32 (16 GiB)
    // over a file of a few hundred bytes.
    const std::string header =
        R"({"model.embed_tokens.weight":{"dtype":"F32","shape":[65536,65536],)"
        R"("data_offsets":[0,17179869184]}})";
    std::string st;
    put<std::uint64_t>(st, header.size());
    st += header + std::string(256, '\0');
    const auto folder = test::hf_folder_with(dir, "big", {{"model.safetensors", st}});
    refused_small({"info", "--model", folder.string()}, "model.safetensors");
}

TEST_CASE("a tokenizer.json claiming a huge token id is refused before anything is sized by it",
          "[byte_bpe][hostile][bounds]") {
    const auto dir = test::temp_dir("bounds-tok");
    const auto folder = test::hf_folder_with(
        dir, "tok",
        {{"tokenizer.bin", ""},
         {"tokenizer.json", test::tokenizer_json_with_added_id("1000000000")}});
    refused_small({"info", "--model", folder.string()},
                  "added_tokens[0].id = 1000000000 is not a token id");
}
