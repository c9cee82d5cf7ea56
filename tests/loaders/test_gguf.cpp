// GGUF: our exports of the llama2.c models read back as the same model (F32: same
// logits within 1e-5 and the same greedy text; F16, BF16, Q8_0, Q4_0: the same greedy text where
// stated, logit differences reported and bounded), the SentencePiece-style tokenizer from GGUF
// metadata against tokenizer.bin, and hostile files refused with one line.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

#include "core/files/gguf_file.h"
#include "core/loaders/gguf_llama.h"
#include "core/loaders/gguf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/session/session.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/tokenizers/spm_tokenizer.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/greedy_runs.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {

std::string export_gguf(const Model& m, const fs::path& dir, const std::string& type) {
    const auto& lm = dynamic_cast<const TransformerModel&>(m);
    const auto path = (dir / (m.name() + "-" + type + ".gguf")).string();
    write_gguf_llama(path, lm.config(), lm.weights(),
                     dynamic_cast<const BpeTokenizer&>(m.tokenizer()), ggml_type_from_name(type),
                     m.name());
    return path;
}

}  // namespace

TEST_CASE("GGUF exports give the llama2.c file's greedy text, F32 its logits within 1e-5",
          "[gguf]") {
    const auto dir = test::temp_dir("gguf-export");
    for (const auto& m : test::llama2c_models()) {
        const test::GreedyRun ref = test::greedy_run(*m, "Once upon a time", 60);
        REQUIRE(ref.logits.size() > 1);
        // Bounds on the largest |logit difference| over every step, from measurements (see the
        // report): generous enough for other prompts, tight enough to catch a wrong layout.
        for (const auto& [type, bound] : std::vector<std::pair<std::string, float>>{
                 {"f32", 1e-5f}, {"f16", 0.05f}, {"bf16", 0.5f}, {"q8_0", 0.5f}}) {
            const auto path = export_gguf(*m, dir, type);
            const auto g = open_model(path);
            CHECK(g->config().describe() == m->config().describe());
            CHECK(g->parameter_count() == m->parameter_count());
            const test::GreedyRun r = test::greedy_run(*g, "Once upon a time", 60);
            const float d = test::max_logit_diff(ref, r);
            INFO(m->name() << " " << type << ": max |logit difference| " << d);
            WARN(m->name() << " " << type << " GGUF: max |logit difference| over "
                           << r.logits.size() << " steps = " << d);
            CHECK(r.tokens == ref.tokens);
            CHECK(r.text == ref.text);
            CHECK(d <= bound);
        }
    }
}

TEST_CASE("a separate classifier and GQA survive the round trip (output.weight)", "[gguf]") {
    const auto dir = test::temp_dir("gguf-separate");
    ModelConfig c = test::tiny_config();  // GQA: 4 heads, 2 kv heads
    c.shared_classifier = false;
    test::write_file(dir / "sep.bin", test::synthetic_checkpoint(c, 7));
    test::write_file(dir / "sep.tok.bin",
                     test::synthetic_tokenizer({" ", "a", " a"}, c.vocab_size));
    const auto m = open_model((dir / "sep.bin").string());
    const auto path = export_gguf(*m, dir, "f32");
    const auto bytes = test::bytes_of(path);
    const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), path);
    REQUIRE(f.tensor("output.weight") != nullptr);
    CHECK(f.tensor("output.weight")->dims == std::vector<std::uint64_t>{16, 300});
    CHECK(f.tensor("blk.1.attn_k.weight")->dims == std::vector<std::uint64_t>{16, 8});
    const auto g = open_model(path);
    CHECK_FALSE(g->config().shared_classifier);
    CHECK(g->config().n_kv_heads == 2);
    const test::GreedyRun a = test::greedy_run(*m, "a a", 30), b = test::greedy_run(*g, "a a", 30);
    CHECK(a.tokens == b.tokens);
    CHECK(test::max_logit_diff(a, b) == 0.0f);
}

TEST_CASE("Q4_0 exports load and generate, their logits stay near", "[gguf]") {
    const auto dir = test::temp_dir("gguf-q4");
    for (const auto& m : test::llama2c_models()) {
        const test::GreedyRun ref = test::greedy_run(*m, "Once upon a time", 20);
        const test::GreedyRun r =
            test::greedy_run(*open_model(export_gguf(*m, dir, "q4_0")), "Once upon a time", 20);
        const float d = test::max_logit_diff(ref, r);
        WARN(m->name() << " q4_0 GGUF: max |logit difference| = " << d
                       << ", same greedy text: " << (r.text == ref.text ? "yes" : "no"));
        CHECK(d < 12.0f);  // 4 bits: coarse (measured 1.6 on the default model, 8.7 on stories260K)
        CHECK(std::equal(ref.tokens.begin(), ref.tokens.begin() + 8, r.tokens.begin()));
    }
}

TEST_CASE("the GGUF tokenizer encodes and decodes as tokenizer.bin does", "[gguf]") {
    const auto dir = test::temp_dir("gguf-tok");
    const std::vector<std::string> texts = {"",
                                            "a",
                                            "Once upon a time, there was a little girl named Lily.",
                                            "  two  spaces   three",
                                            "tab\there\nnewline",
                                            "12345 + 678 = 999",
                                            "caf\xC3\xA9 na\xC3\xAFve \xE4\xBD\xA0\xE5\xA5\xBD",
                                            "emoji \xF0\x9F\x98\x80!",
                                            "\xE2\x96\x81 a literal underbar",
                                            "<s> not a control token",
                                            std::string("nul\0byte", 8),
                                            "\xFF\xFE broken utf-8 \xC3"};
    for (const auto& m : test::llama2c_models()) {
        const auto g = open_model(export_gguf(*m, dir, "f32"));
        CHECK(g->tokenizer().vocab_size() == m->tokenizer().vocab_size());
        CHECK(g->tokenizer().bos() == m->tokenizer().bos());
        for (const auto& t : texts) {
            INFO(m->name() << ": " << t);
            const auto ids = m->tokenizer().encode(t);
            CHECK(g->tokenizer().encode(t) == ids);
            for (std::size_t i = 1; i < ids.size(); ++i) {
                CHECK(g->tokenizer().decode(ids[i - 1], ids[i]) ==
                      m->tokenizer().decode(ids[i - 1], ids[i]));
                CHECK(g->tokenizer().printable(ids[i - 1], ids[i]) ==
                      m->tokenizer().printable(ids[i - 1], ids[i]));
            }
        }
        for (int id = 3; id < m->tokenizer().vocab_size(); ++id)
            CHECK(g->tokenizer().piece(id) == m->tokenizer().piece(id));
        const auto& spm = dynamic_cast<const SpmTokenizer&>(g->tokenizer());
        CHECK(spm.eos() == 2);
        CHECK(spm.type(1) == SpmTokenizer::PieceType::Control);
        CHECK(spm.type(3 + 'A') == SpmTokenizer::PieceType::Byte);
        CHECK(g->stop_tokens() == std::vector<int>{2, 1});
    }
}

TEST_CASE("a GGUF file is recognised by its magic, not its name", "[gguf]") {
    const auto dir = test::temp_dir("gguf-magic");
    const auto m = open_model("default");
    const auto path = export_gguf(*m, dir, "q8_0");
    fs::copy_file(path, dir / "looks-like-llama2c.bin");
    CHECK(open_model((dir / "looks-like-llama2c.bin").string())->format().find("GGUF v3") == 0);
    // And a llama2.c checkpoint named .gguf stays a llama2.c checkpoint.
    const auto tiny = test::write_tiny_model(dir);
    fs::copy_file(tiny, dir / "tiny.gguf");
    CHECK(open_model((dir / "tiny.gguf").string(), (dir / "tiny.tok.bin").string())
              ->format()
              .find("llama2.c") == 0);
    // A GGUF carries its tokenizer: --tokenizer with one is an error, not silently ignored.
    CHECK_THROWS_WITH(open_model(path, (dir / "tiny.tok.bin").string()),
                      Catch::Contains("carries its own tokenizer"));
}

TEST_CASE("half and bfloat16 conversions are exact both ways", "[gguf]") {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const float f = half_to_float(static_cast<std::uint16_t>(h));
        if (std::isnan(f)) continue;
        REQUIRE(float_to_half(f) == h);
    }
    CHECK(half_to_float(0x3c00) == 1.0f);
    CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
    CHECK(float_to_half(65520.0f) == 0x7c00);            // rounds up to inf
    CHECK(float_to_half(1.0f + 1.0f / 2048) == 0x3c00);  // a tie: to even
    CHECK(float_to_half(1.0f + 3.0f / 2048) == 0x3c02);
}

TEST_CASE("hostile GGUF files: every cut and every broken field is one clear error", "[gguf]") {
    const auto dir = test::temp_dir("gguf-hostile");
    test::write_tiny_model(dir);
    const auto tiny = open_model((dir / "tiny.bin").string(), (dir / "tiny.tok.bin").string());
    const auto path = export_gguf(*tiny, dir, "q8_0");
    const auto good = test::bytes_of(path);
    REQUIRE_NOTHROW(parse_gguf_llama(good.data(), good.size(), "good"));

    SECTION("every truncation") {
        // Up to the last tensor's end (the file's last bytes are its padding to the alignment).
        for (std::size_t n = 0; n + 32 < good.size(); n += (n < 2000 ? 1 : 97)) {
            INFO("cut at " << n);
            CHECK_THROWS_AS(parse_gguf_llama(good.data(), n, "cut"), Error);
        }
    }
    // Header: "GGUF", u32 version at 4, u64 n_tensors at 8, u64 n_kv at 16, first key at 24.
    auto patched = [&](std::size_t at, const void* v, std::size_t n) {
        auto b = good;
        std::memcpy(b.data() + at, v, n);
        return b;
    };
    auto refused = [&](const std::vector<unsigned char>& b, const std::string& why) {
        try {
            parse_gguf_llama(b.data(), b.size(), "bad.gguf");
            FAIL("accepted: " << why);
        } catch (const Error& e) {
            const std::string msg = e.what();
            INFO(msg);
            CHECK(msg.find("bad.gguf") == 0);
            CHECK(msg.find(why) != std::string::npos);
            CHECK(msg.find('\n') == std::string::npos);
        }
    };
    const std::uint32_t v1 = 1, v9 = 9, be3 = 0x03000000;
    refused(patched(4, &v1, 4), "version 1");
    refused(patched(4, &v9, 4), "version 9");
    refused(patched(4, &be3, 4), "big-endian");
    refused(patched(0, "GGUG", 4), "magic");
    const std::uint64_t huge = ~0ull, big = 1ull << 40;
    refused(patched(8, &huge, 8), "tensor infos cannot fit");
    refused(patched(16, &huge, 8), "metadata entries cannot fit");
    refused(patched(24, &huge, 8), "runs past the end");  // the first key's length
    refused(patched(24, &big, 8), "runs past the end");

    // Fields found by their names in the file: a tensor's dims, type and offset follow its name.
    auto find = [&](const std::string& s) {
        const auto it = std::search(good.begin(), good.end(), s.begin(), s.end());
        REQUIRE(it != good.end());
        return static_cast<std::size_t>(it - good.begin()) + s.size();
    };
    const std::size_t q = find("blk.0.attn_q.weight");  // then u32 n_dims, u64 dims[2], u32, u64
    const std::uint32_t five = 5, bad_type = 12, dims1 = 1;
    refused(patched(q, &five, 4), "dimensions (1..4)");
    refused(patched(q, &dims1, 4), "");  // the rest of the infos no longer line up
    refused(patched(q + 4, &huge, 8), "dimension 0 = 18446744073709551615 is not a dimension");
    refused(patched(q + 4, &big, 8), "is more than 1099511627776");
    const std::uint64_t d17 = 17;
    refused(patched(q + 4, &d17, 8), "");  // rows no longer whole Q8_0 blocks
    refused(patched(q + 20, &bad_type, 4), "Q4_K");
    refused(patched(q + 24, &huge, 8), "alignment");
    const std::uint64_t far = std::uint64_t(good.size()) / 32 * 32;
    refused(patched(q + 24, &far, 8), "runs past the end");
    // Metadata: a shape that disagrees with the tensors, an array of arrays, a key of wrong type.
    const std::size_t emb = find("llama.embedding_length") + 4;  // after its u32 type
    const std::uint32_t dim8 = 8;
    refused(patched(emb, &dim8, 4), "is not the head size");
    const std::size_t toks = find("tokenizer.ggml.tokens");
    const std::uint32_t arr = 9, f32 = 6;
    refused(patched(toks + 4, &arr, 4), "nested arrays");
    refused(patched(toks + 8, &huge, 8), "strings cannot fit");  // the array's length
    refused(patched(toks + 8, &big, 8), "strings cannot fit");
    refused(patched(toks + 4, &f32, 4), "");  // its strings read as floats: misaligned after
    const std::size_t arch = find("general.architecture") + 4 + 8;
    refused(patched(arch, "gpt2\0", 5), "");
    refused(patched(arch, "LLAMA", 5), "architecture 'LLAMA'");

    // A context longer than kvscope holds is cut, and the format says so.
    const std::size_t ctx = find("llama.context_length") + 4;
    const std::uint32_t million = 1000000;
    const auto cut = patched(ctx, &million, 4);
    const GgufLlama g = parse_gguf_llama(cut.data(), cut.size(), "long.gguf");
    CHECK(g.ck.config.seq_len == 131072);
    CHECK(g.format.find("context cut from 1000000 to 131072") != std::string::npos);
}

TEST_CASE("kvscope-cli: export, info and generate on GGUF, a broken file exits 2 with one line",
          "[gguf][cli]") {
    const auto dir = test::temp_dir("gguf-cli");
    const auto out = (dir / "m.gguf").string();
    auto r = test::run_cli({"export", "--model", "default", "--gguf", out, "--type", "q8_0"});
    REQUIRE(r.exit_code == 0);
    r = test::run_cli({"info", "--model", out});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("architecture: llama") != std::string::npos);
    CHECK(r.out.find("format: GGUF v3, llama, tensors:") != std::string::npos);
    CHECK(r.out.find("Q8_0") != std::string::npos);
    CHECK(r.out.find("tokenizer: SentencePiece-style from GGUF metadata") != std::string::npos);
    CHECK(r.out.find(
              "KV cache: 2 x 4 layers x 2 kv heads x 16 head size x 4 B = 1.00 KiB per token") !=
          std::string::npos);
    const auto a = test::run_cli(
        {"generate", "--model", "default", "--prompt", "Once", "--max-new-tokens", "30"});
    const auto b =
        test::run_cli({"generate", "--model", out, "--prompt", "Once", "--max-new-tokens", "30"});
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    CHECK(a.out == b.out);

    auto bytes = test::bytes_of(out);
    bytes.resize(bytes.size() / 2);
    test::write_file(dir / "half.gguf", bytes);
    r = test::run_cli({"info", "--model", (dir / "half.gguf").string()});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("runs past the end") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    // Refused: exporting over the model being read, an unknown type.
    r = test::run_cli({"export", "--model", out, "--gguf", (dir / "x.gguf").string()});
    CHECK(r.exit_code == 2);
    r = test::run_cli({"export", "--model", "default", "--gguf", out, "--type", "q5_1"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is not one of f32") != std::string::npos);
}

TEST_CASE("kvscope-cli export: the summary names the matrix types the file holds, as info reads",
          "[gguf][cli]") {
    // A row that is not whole blocks of the type asked falls back (the default model's rows of
    // 128 and 344 values, stories260K's of 64 and 172, against 256-value K-quant blocks and
    // 32-value Q8_0/Q4_0 blocks): the summary must say what was written, not what was asked.
    const auto dir = test::temp_dir("gguf-export-types");
    std::vector<std::string> models = {"default"};
    if (fs::exists(test::stories_model())) models.push_back(test::stories_model());
    const auto between = [](const std::string& s, const std::string& a, const std::string& b) {
        const auto i = s.find(a);
        if (i == std::string::npos) return std::string("(no '" + a + "')");
        const auto j = s.find(b, i + a.size());
        return s.substr(i + a.size(), j == std::string::npos ? j : j - i - a.size());
    };
    int fell_back = 0;
    for (const auto& model : models)
        for (const char* type :
             {"f32", "f16", "bf16", "q8_0", "q4_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"}) {
            INFO(model << " --type " << type);
            const auto out = (dir / (std::string(type) + ".gguf")).string();
            const auto e =
                test::run_cli({"export", "--model", model, "--gguf", out, "--type", type});
            REQUIRE(e.exit_code == 0);
            INFO(e.out);
            const std::string listed = between(e.out, "GGUF v3, llama, ", " matrices");
            const auto info = test::run_cli({"info", "--model", out});
            REQUIRE(info.exit_code == 0);
            INFO(info.out);
            // What info finds: the matrices it keeps as stored ("Q8_0 x 25, F16 x 4"), or for a
            // float32 file every tensor F32.
            const bool f32 = std::string(type) == "f32";
            const std::string found = f32 ? "F32" : between(info.out, "kept as stored (", ";");
            if (f32) {  // "tensors: 38 F32": one type
                const std::string tensors = between(info.out, "tensors: ", ",");
                CHECK(tensors.find(" F32") != std::string::npos);
                CHECK(std::count(tensors.begin(), tensors.end(), ' ') == 1);
            }
            if (listed.find(" x ") == std::string::npos) {  // one type: named alone
                CHECK((found == listed || found.rfind(listed + " x ", 0) == 0));
                CHECK(found.find(',') == std::string::npos);
            } else {
                ++fell_back;
                CHECK(listed == found);
                const std::string asked = ggml_type_name(ggml_type_from_name(type));
                CHECK(e.out.find("(" + asked + " asked; rows of ") != std::string::npos);
            }
            // llama.cpp's file type for what was asked (its llama_ftype numbers).
            const auto bytes = test::bytes_of(out);
            const auto g = GgufFile::parse(bytes.data(), bytes.size(), out);
            const std::map<std::string, std::uint64_t> ftype = {
                {"f32", 0},   {"f16", 1},   {"bf16", 32}, {"q8_0", 7},  {"q4_0", 2},
                {"q2_k", 10}, {"q3_k", 11}, {"q4_k", 14}, {"q5_k", 16}, {"q6_k", 18}};
            CHECK(g.get_uint("general.file_type") == ftype.at(type));
        }
    // The default model's rows of 344 values are not whole 32-value blocks: every compact type
    // but the 16-bit ones mixes.
    CHECK(fell_back >= 7);
}
