// Everything kvscope writes it reads back, NaN and the infinities included: runs on models whose
// arithmetic gives NaN (every weight NaN, every weight +inf, and a Q4_K file with one block's
// scale NaN, kept compact and widened to float32) write trace JSON that kvscope-cli replay and the
// trace reader take, value for value (NaN where NaN was written, the infinities as themselves),
// and replay writes the same trace again; the models' own exports (GGUF, Hugging Face) open and
// run.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/files/gguf_file.h"
#include "core/loaders/checkpoint_writer.h"
#include "core/loaders/gguf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/session/trace_reader.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/file_bytes.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bitwise float equality, NaN equal to NaN: a round trip keeps every value.
bool same(float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!same(a[i], b[i])) return false;
    return true;
}

// The tiny model with every weight `fill`.
std::string filled_model(const fs::path& dir, const std::string& name, float fill) {
    const ModelConfig c = test::tiny_config();
    auto b = test::synthetic_checkpoint(c);
    for (std::size_t at = 28; at + 4 <= b.size(); at += 4) std::memcpy(&b[at], &fill, 4);
    test::write_file(dir / (name + ".bin"), b);
    test::write_file(dir / (name + ".tok.bin"), test::synthetic_tokenizer({" "}, c.vocab_size));
    return (dir / (name + ".bin")).string();
}

// A Q4_K GGUF of K-quant shapes whose first block of blk.0.attn_q has its scale d NaN.
std::string q4k_nan_scale(const fs::path& dir) {
    ModelConfig c;
    c.dim = 256, c.hidden_dim = 768, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2;
    c.vocab_size = 300, c.seq_len = 64;
    const auto bin = (dir / "k.bin").string(), tok = (dir / "k.tok.bin").string();
    write_random_checkpoint(bin, c, 3);
    test::write_file(tok, tokenizer_file_bytes({" a", " b"}, c.vocab_size));
    const auto f32 = open_model(bin, tok);
    const auto& lm = dynamic_cast<const TransformerModel&>(*f32);
    const auto path = (dir / "q4k-nan.gguf").string();
    write_gguf_llama(path, lm.config(), lm.weights(),
                     dynamic_cast<const BpeTokenizer&>(f32->tokenizer()), GgmlType::Q4_K, "k");
    auto bytes = read_file_bytes(path, std::size_t(1) << 30);
    std::size_t at = 0;
    {
        const GgufFile g = GgufFile::parse(bytes.data(), bytes.size(), path);
        const GgufTensorInfo* q = g.tensor("blk.0.attn_q.weight");
        REQUIRE(q);
        REQUIRE(q->type == GgmlType::Q4_K);
        at = static_cast<std::size_t>(q->data - bytes.data());
    }
    const std::uint16_t nan_half = 0x7E00;  // block_q4_K starts with its scale d (f16)
    std::memcpy(&bytes[at], &nan_half, 2);
    test::write_file(path, bytes);
    return path;
}

// Every float a step records, read back from `path`, against the trace the reader gave the first
// time (the values of a trace written, read, written again and read again).
void same_steps(const RecordedRun& a, const RecordedRun& b) {
    REQUIRE(a.sessions.size() == b.sessions.size());
    for (std::size_t s = 0; s < a.sessions.size(); ++s) {
        const auto& x = a.sessions[s].trace.steps();
        const auto& y = b.sessions[s].trace.steps();
        REQUIRE(x.size() == y.size());
        for (std::size_t k = 0; k < x.size(); ++k) {
            CHECK(same(x[k].logits, y[k].logits));
            CHECK(same(x[k].kv_rows, y[k].kv_rows));
            CHECK(same(x[k].q_rows, y[k].q_rows));
            CHECK(same(x[k].attn_out, y[k].attn_out));
            CHECK(same(x[k].attention.p, y[k].attention.p));
            REQUIRE(x[k].top.size() == y[k].top.size());
            for (std::size_t i = 0; i < x[k].top.size(); ++i) {
                CHECK(same(x[k].top[i].prob, y[k].top[i].prob));
                CHECK(same(x[k].top[i].logit, y[k].top[i].logit));
            }
        }
    }
    REQUIRE(a.logit_max_diff.size() == b.logit_max_diff.size());
    for (std::size_t i = 0; i < a.logit_max_diff.size(); ++i)
        CHECK(same(float(a.logit_max_diff[i]), float(b.logit_max_diff[i])));
}

bool any_nan(const RecordedRun& r) {
    for (const StepRecord& s : r.sessions[0].trace.steps())
        for (float v : s.logits)
            if (std::isnan(v)) return true;
    return false;
}

}  // namespace

TEST_CASE("traces of models that compute NaN and infinities read back as written",
          "[trace][replay][hostile][nan]") {
    const auto dir = test::temp_dir("nan-round-trip");
    const float nan = std::numeric_limits<float>::quiet_NaN(),
                inf = std::numeric_limits<float>::infinity();
    struct Case {
        std::string name, model;
        std::vector<std::string> extra;
    };
    const std::string q4k = q4k_nan_scale(dir);
    const std::vector<Case> cases = {
        {"all-nan", filled_model(dir, "all-nan", nan), {}},
        {"all-inf", filled_model(dir, "all-inf", inf), {}},
        {"q4k-nan-scale", q4k, {}},
        {"q4k-nan-scale-f32", q4k, {"--weights", "f32"}},
    };
    for (const Case& c : cases)
        for (const char* command : {"generate", "compare"}) {
            INFO(c.name << " " << command);
            const std::string t = (dir / (c.name + "-" + command + ".json")).string();
            std::vector<std::string> args = {command, "--model",          c.model, "--prompt",
                                             "a a",   "--max-new-tokens", "3",     "--trace-json",
                                             t,       "--backend",        "cpu"};
            args.insert(args.end(), c.extra.begin(), c.extra.end());
            const auto r = test::run_cli(args);
            INFO(r.err);
            REQUIRE(r.exit_code == 0);
            const std::string text = test::slurp(t);
            // What JSON numbers cannot hold is written as text, never as null.
            if (c.name != "q4k-nan-scale-f32" && c.name != "q4k-nan-scale")
                CHECK(text.find("\"NaN\"") != std::string::npos);
            const RecordedRun first = read_trace_file(t);
            if (c.name == "all-nan") CHECK(any_nan(first));
            // replay reads it and writes it again; that reads back the same values.
            const std::string again = (dir / (c.name + "-" + command + "-again.json")).string();
            const auto rp = test::run_cli({"replay", t, "--trace-json", again});
            INFO(rp.err);
            CHECK(rp.exit_code == 0);
            same_steps(first, read_trace_file(again));
        }
}

TEST_CASE("a model that computes NaN exports and reopens", "[hostile][nan][gguf][hf]") {
    const auto dir = test::temp_dir("nan-export");
    const std::string m = filled_model(dir, "all-nan", std::numeric_limits<float>::quiet_NaN());
    for (const std::vector<std::string>& out :
         {std::vector<std::string>{"--gguf", (dir / "n.gguf").string()},
          std::vector<std::string>{"--gguf", (dir / "n8.gguf").string(), "--type", "q8_0"},
          std::vector<std::string>{"--hf", (dir / "hf").string()}}) {
        std::vector<std::string> args = {"export", "--model", m};
        args.insert(args.end(), out.begin(), out.end());
        const auto e = test::run_cli(args);
        INFO(e.err);
        REQUIRE(e.exit_code == 0);
        const auto g = test::run_cli(
            {"generate", "--model", out[1], "--prompt", "a", "--max-new-tokens", "2"});
        INFO(g.err);
        CHECK(g.exit_code == 0);
    }
}
