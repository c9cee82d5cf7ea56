// Qwen2-shaped models: Llama with biases on the q, k and v projections. The default
// model's weights with biases added (random, fixed seed) must compute something else than
// without them, read back from our GGUF (architecture qwen2, q/k in its rotate-half order) and
// Hugging Face (Qwen2ForCausalLM) exports as the same logits, bit for bit in F32, and count the
// biases' FLOPs in the op log. llama.cpp's view of the same GGUF: tests/peer/peer_llama_cpp.cpp.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/loaders/gguf_writer.h"
#include "core/loaders/hf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/counts.h"
#include "core/model/transformer_model.h"
#include "core/session/session.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/greedy_runs.h"
#include "tests/support/qwen2_model.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

TEST_CASE("bias add: every row plus the bias, on the CPU backend's both op sets", "[qwen2]") {
    for (bool reference : {false, true}) {
        CpuBackend be;
        be.set_reference_ops(reference);
        std::vector<float> x = {1, 2, 3, 4, 5, 6}, b = {0.5f, -1, 2};
        be.add_bias({x.data(), x.size()}, {b.data(), b.size()}, 2, 3);
        CHECK(x == std::vector<float>{1.5f, 1, 5, 4.5f, 4, 8});
    }
}

TEST_CASE("a Qwen2-shaped model: its biases matter, and GGUF and HF exports read back the same",
          "[qwen2][gguf][hf]") {
    const auto dir = test::temp_dir("qwen2");
    const auto base = open_model("default");
    const auto q = test::with_qkv_biases(*base, 7);
    const std::string prompt = "Once upon a time";
    const test::GreedyRun ref = test::greedy_run(*q, prompt, 30);
    CHECK(test::max_logit_diff(test::greedy_run(*base, prompt, 30), ref) > 1e-3f);
    CHECK(q->config().describe().find("q/k/v biases") != std::string::npos);
    const auto& tok = dynamic_cast<const BpeTokenizer&>(q->tokenizer());

    const auto gguf = (dir / "q.gguf").string();
    write_gguf_llama(gguf, q->config(), q->weights(), tok, GgmlType::F32, "q");
    const auto g = open_model(gguf);
    CHECK(g->format().find("GGUF v3, qwen2") == 0);
    CHECK(g->config().qkv_bias);
    CHECK(test::max_logit_diff(ref, test::greedy_run(*g, prompt, 30)) == 0.0f);
    const auto info = test::run_cli({"info", "--model", gguf});
    CHECK(info.exit_code == 0);
    CHECK(info.out.find("architecture: qwen2 (llama with q/k/v biases)") != std::string::npos);
    CHECK(info.out.find("format: GGUF v3, qwen2,") != std::string::npos);

    const auto folder = (dir / "hf").string();
    write_hf_llama(folder, q->config(), q->weights(), tok, GgmlType::F32, 0);
    std::ifstream in(fs::path(folder) / "config.json");
    CHECK(nlohmann::json::parse(in).at("architectures").at(0) == "Qwen2ForCausalLM");
    const auto h = open_model(folder);
    CHECK(h->format().find("Hugging Face Qwen2ForCausalLM") == 0);
    CHECK(test::max_logit_diff(ref, test::greedy_run(*h, prompt, 30)) == 0.0f);

    // Kept compact (--weights): the q/k matrices as reordered copies in the file's own type give
    // the logits of the same file dequantised, bit for bit (a compact matmul is the float32
    // matmul of the dequantised matrix).
    const auto g16 = (dir / "q-f16.gguf").string();
    write_gguf_llama(g16, q->config(), q->weights(), tok, GgmlType::F16, "q");
    const test::GreedyRun wide = test::greedy_run(*open_model(g16), prompt, 30);
    CHECK(test::max_logit_diff(ref, wide) < 0.05f);
    CHECK(test::max_logit_diff(
              wide, test::greedy_run(*open_model(g16, "", GgmlType::F16), prompt, 30)) == 0.0f);
    const auto h16 = (dir / "hf-bf16").string();
    write_hf_llama(h16, q->config(), q->weights(), tok, GgmlType::BF16, 0);
    const test::GreedyRun hw = test::greedy_run(*open_model(h16), prompt, 30);
    CHECK(test::max_logit_diff(
              hw, test::greedy_run(*open_model(h16, "", GgmlType::BF16), prompt, 30)) == 0.0f);
}

TEST_CASE("a Qwen2-shaped model's op log has the three bias adds and counts their FLOPs",
          "[qwen2]") {
    const auto base = open_model("default");
    const auto q = test::with_qkv_biases(*base, 7);
    const ModelConfig& c = q->config();
    CpuBackend be;
    SessionConfig sc;
    sc.max_new_tokens = 2;
    Session s(*q, be, sc);
    s.set_prompt("The cat sat");
    const int P = s.prompt_len();
    const StepRecord& r = s.step();  // prefill
    int biases = 0;
    for (const OpRecord& o : r.ops.ops)
        biases += o.kind == OpKind::QBias || o.kind == OpKind::KBias || o.kind == OpKind::VBias;
    CHECK(biases == 3 * c.n_layers);
    CHECK(r.ops.flops() == Approx(r.counts.flops).epsilon(1e-12));
    const double extra =
        count_llama_forward(c, 0, P).flops - count_llama_forward(base->config(), 0, P).flops;
    CHECK(extra == double(c.n_layers) * P * (c.dim + 2 * c.kv_dim()));
}

TEST_CASE("Qwen2 files that are not what they say are refused by name", "[qwen2][hf]") {
    const auto dir = test::temp_dir("qwen2-bad");
    const auto base = open_model("default");
    const auto q = test::with_qkv_biases(*base, 7);
    const auto& tok = dynamic_cast<const BpeTokenizer&>(q->tokenizer());
    const auto folder = (dir / "hf").string();
    write_hf_llama(folder, q->config(), q->weights(), tok, GgmlType::F32, 0);
    const auto cfg_path = fs::path(folder) / "config.json";
    std::ifstream in(cfg_path);
    const auto config = nlohmann::json::parse(in);
    in.close();
    auto write_config = [&](const nlohmann::json& j) { std::ofstream(cfg_path) << j.dump(); };
    auto with = config;
    with["use_sliding_window"] = true;
    write_config(with);
    CHECK_THROWS_WITH(open_model(folder), Catch::Contains("use_sliding_window is true"));
    // A Llama config over Qwen2's tensors: the biases are tensors no Llama has.
    with = config;
    with["architectures"] = {"LlamaForCausalLM"};
    write_config(with);
    CHECK_THROWS_WITH(open_model(folder),
                      Catch::Contains("_proj.bias' is not one of a LlamaForCausalLM model's"));
    // A Qwen2 config over a Llama's tensors: no biases.
    const auto llama = (dir / "llama").string();
    write_hf_llama(llama, base->config(), dynamic_cast<const TransformerModel&>(*base).weights(),
                   tok, GgmlType::F32, 0);
    std::ifstream lin(fs::path(llama) / "config.json");
    auto lc = nlohmann::json::parse(lin);
    lin.close();
    lc["architectures"] = {"Qwen2ForCausalLM"};
    std::ofstream(fs::path(llama) / "config.json") << lc.dump();
    CHECK_THROWS_WITH(open_model(llama),
                      Catch::Contains("no tensor 'model.layers.0.self_attn.q_proj.bias'"));
}
