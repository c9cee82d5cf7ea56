// GPT-2's forward pass: LayerNorm with a bias, learned positions added to the token's
// embedding, biases on every linear layer, a GELU MLP, no RoPE. Checked against a plain
// transcription of GPT-2's block written here in double precision (as Hugging Face's
// modeling_gpt2 computes it), step by step through a cached greedy decode; the op log against
// layer_ops and the counted FLOPs. The file formats: tests/test_gpt2_formats.cpp.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/loaders/model_loader.h"
#include "core/model/counts.h"
#include "core/session/session.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/reference_ops.h"
#include "tests/support/gpt2_model.h"
#include "tests/support/greedy_runs.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

using Vec = std::vector<double>;

// y = W x + b for W [m, n] (our [out, in] layout), b [m] (may be null)
Vec linear(const float* W, const float* b, const Vec& x, int m) {
    const std::size_t n = x.size();
    Vec y(m);
    for (int i = 0; i < m; ++i) {
        double s = b ? b[i] : 0.0;
        for (std::size_t j = 0; j < n; ++j) s += double(W[i * n + j]) * x[j];
        y[i] = s;
    }
    return y;
}

Vec layer_norm(const Vec& x, const float* g, const float* b, double eps) {
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= x.size();
    for (double v : x) var += (v - mean) * (v - mean);
    var /= x.size();
    Vec y(x.size());
    for (std::size_t j = 0; j < x.size(); ++j)
        y[j] = (x[j] - mean) / std::sqrt(var + eps) * g[j] + b[j];
    return y;
}

// GPT-2 over the whole sequence, no cache: the next-token logits after its last token.
std::vector<float> gpt2_logits(const TransformerModel& m, const std::vector<int>& tokens) {
    const ModelConfig& c = m.config();
    const LlamaWeights& W = m.weights();
    const int d = c.dim, hid = c.hidden_dim, H = c.n_heads, hs = c.head_dim();
    const int T = static_cast<int>(tokens.size());
    const std::size_t D = d;
    std::vector<Vec> x(T, Vec(d));
    for (int t = 0; t < T; ++t)
        for (int j = 0; j < d; ++j)
            x[t][j] = double(W.token_embedding[tokens[t] * D + j]) + W.pos_embedding[t * D + j];
    for (int l = 0; l < c.n_layers; ++l) {
        std::vector<Vec> q(T), k(T), v(T);
        for (int t = 0; t < T; ++t) {
            const Vec xb =
                layer_norm(x[t], W.norm_att + l * D, W.norm_att_bias + l * D, c.norm_eps);
            q[t] = linear(W.wq + l * D * D, W.bq + l * D, xb, d);
            k[t] = linear(W.wk + l * D * D, W.bk + l * D, xb, d);
            v[t] = linear(W.wv + l * D * D, W.bv + l * D, xb, d);
        }
        for (int t = 0; t < T; ++t) {
            Vec att(d, 0.0);
            for (int h = 0; h < H; ++h) {
                Vec score(t + 1);
                double mx = -1e300, sum = 0;
                for (int s = 0; s <= t; ++s) {
                    double dot = 0;
                    for (int i = 0; i < hs; ++i) dot += q[t][h * hs + i] * k[s][h * hs + i];
                    score[s] = dot / std::sqrt(double(hs));
                    mx = std::max(mx, score[s]);
                }
                for (double& s : score) sum += (s = std::exp(s - mx));
                for (int s = 0; s <= t; ++s)
                    for (int i = 0; i < hs; ++i)
                        att[h * hs + i] += score[s] / sum * v[s][h * hs + i];
            }
            const Vec o = linear(W.wo + l * D * D, W.bo + l * D, att, d);
            for (int j = 0; j < d; ++j) x[t][j] += o[j];
        }
        for (int t = 0; t < T; ++t) {
            const Vec xb =
                layer_norm(x[t], W.norm_ffn + l * D, W.norm_ffn_bias + l * D, c.norm_eps);
            Vec h = linear(W.w1 + l * hid * D, W.b1 + l * std::size_t(hid), xb, hid);
            for (double& e : h)
                e = 0.5 * e * (1 + std::tanh(std::sqrt(2 / M_PI) * (e + 0.044715 * e * e * e)));
            const Vec o = linear(W.w2 + l * D * hid, W.b2 + l * D, h, d);
            for (int j = 0; j < d; ++j) x[t][j] += o[j];
        }
    }
    const Vec last = layer_norm(x[T - 1], W.norm_final, W.norm_final_bias, c.norm_eps);
    const Vec logits = linear(W.wcls, nullptr, last, c.vocab_size);
    return {logits.begin(), logits.end()};
}

}  // namespace

TEST_CASE("layernorm and gelu: the reference ops against their definitions", "[gpt2][cpu_ops]") {
    const std::vector<float> x = {1, 2, 3, 4, -2, 0.5f, 7, 1};
    const std::vector<float> g = {1, 2, 0.5f, 1}, b = {0, 1, -1, 0.25f};
    std::vector<float> out(8);
    ref::layernorm(out.data(), x.data(), g.data(), b.data(), 2, 4, 1e-5f);
    for (int t = 0; t < 2; ++t) {
        const Vec row(x.begin() + 4 * t, x.begin() + 4 * t + 4);
        const Vec want = layer_norm(row, g.data(), b.data(), 1e-5);
        for (int j = 0; j < 4; ++j) CHECK(out[4 * t + j] == Approx(want[j]).margin(1e-6));
    }
    // GELU: gelu(0) = 0, gelu(x) - gelu(-x) = x, and two values of the tanh form.
    std::vector<float> h = {0, 1, -1, 3, -3, 20, -20};
    ref::gelu(h.data(), h.size());
    CHECK(h[0] == 0.0f);
    CHECK(h[1] == Approx(0.841192).margin(1e-6));
    CHECK(h[2] == Approx(-0.158808).margin(1e-6));
    CHECK(h[3] - h[4] == Approx(3.0f).margin(1e-6));
    CHECK(h[5] == 20.0f);
    CHECK(h[6] == Approx(0.0f).margin(1e-6));
}

TEST_CASE("a GPT-2-shaped model decodes with its cache as GPT-2 computes without one", "[gpt2]") {
    const auto base = open_model("default");
    const auto m = test::random_gpt2(*base, 11);
    REQUIRE(m->config().gpt2());
    CHECK(m->config().describe().find("gpt2, ") == 0);
    CHECK(m->config().parameter_count() == m->config().stored_floats());
    for (bool reference_ops : {false, true}) {
        CpuBackend be(false);
        be.set_reference_ops(reference_ops);
        SessionConfig cfg;
        cfg.max_new_tokens = 12;
        Session s(*m, be, cfg);
        s.set_prompt("Once upon a time there was");
        std::vector<std::vector<float>> steps;
        while (!s.finished()) steps.push_back(s.step().logits);
        const std::vector<int>& toks = s.tokens();
        const int P = s.prompt_len();
        REQUIRE(steps.size() >= 2);
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const std::vector<int> seen(toks.begin(), toks.begin() + P + i);
            const std::vector<float> want = gpt2_logits(*m, seen);
            float worst = 0;
            for (std::size_t j = 0; j < want.size(); ++j)
                worst = std::max(worst, std::abs(want[j] - steps[i][j]));
            INFO("step " << i << ", reference ops " << reference_ops);
            CHECK(worst < 2e-5f);
        }
    }
    // The same weights read as a Llama block would give other logits: the design matters.
    CHECK(test::max_logit_diff(test::greedy_run(*base, "Once upon a time", 4),
                               test::greedy_run(*m, "Once upon a time", 4)) > 0.1f);
}

TEST_CASE("a GPT-2-shaped model's op log follows layer_ops and counts every FLOP", "[gpt2]") {
    const auto base = open_model("default");
    const auto m = test::random_gpt2(*base, 11);
    const ModelConfig& c = m->config();
    CpuBackend be;
    SessionConfig sc;
    sc.max_new_tokens = 3;
    Session s(*m, be, sc);
    s.set_prompt("The cat sat");
    const int P = s.prompt_len();
    for (int step = 0; step < 2; ++step) {
        const StepRecord& r = s.step();
        const std::vector<OpKind> per_layer = layer_ops(c);
        std::vector<OpKind> want{OpKind::Embedding, OpKind::PosEmbedding, OpKind::PosAdd};
        for (int l = 0; l < c.n_layers; ++l)
            want.insert(want.end(), per_layer.begin(), per_layer.end());
        want.insert(want.end(), {OpKind::FinalLayerNorm, OpKind::Classifier, OpKind::Sampling});
        std::vector<OpKind> got;
        for (const OpRecord& o : r.ops.ops) got.push_back(o.kind);
        CHECK(got == want);
        for (const OpRecord& o : r.ops.ops) CHECK(o.kind != OpKind::Rope);
        CHECK(r.ops.flops() == Approx(r.counts.flops).epsilon(1e-12));
        const int T = step == 0 ? P : 1, pos0 = step == 0 ? 0 : P;
        CHECK(r.counts.flops == count_llama_forward(c, pos0, T).flops);
    }
    // Per token and layer, beside the matmuls: two layernorms (8 per element), gelu (8 per
    // hidden element), seven bias adds, two residual adds; and the position add once.
    const double d = c.dim, h = c.hidden_dim;
    const StepCounts one = count_llama_forward(c, 0, 1);
    const double matmuls = 2 * (4 * d * d + 2 * d * h) * c.n_layers + 2 * d * c.vocab_size;
    CHECK(one.matmul_flops == matmuls);
    const double small = c.n_layers * (2 * 8 * d + 8 * h + (5 * d + h) + 2 * d) + d + 8 * d;
    CHECK(one.flops - one.matmul_flops - one.attention_flops ==
          Approx(small + 5.0 * c.n_heads * c.n_layers).epsilon(1e-12));
}

TEST_CASE("a GPT-2 config that cannot be run is refused by name", "[gpt2]") {
    const auto base = open_model("default");
    ModelConfig c = test::random_gpt2(*base, 1)->config();
    c.validate("ok");
    auto refused = [](ModelConfig bad, const char* why) {
        CHECK_THROWS_WITH(bad.validate("m"), Catch::Contains(why));
    };
    ModelConfig bad = c;
    bad.seq_len = c.n_positions + 1;
    refused(bad, "longer than the");
    bad = c;
    bad.n_positions = 0;
    refused(bad, "n_positions = 0");
    bad = c;
    bad.n_kv_heads = 1;
    refused(bad, "as many key/value heads");
    bad = c;
    bad.qkv_bias = false;
    refused(bad, "have biases");
    bad = c;
    bad.norm_eps = 0;
    refused(bad, "LayerNorm epsilon");
    bad = c;
    bad.arch = Architecture::Llama;
    refused(bad, "learned position table");
}

TEST_CASE("make-model --arch gpt2 writes a GGUF that info and generate open, cached = uncached",
          "[gpt2][cli]") {
    const auto dir = test::temp_dir("gpt2-cli");
    const auto path = (dir / "g.gguf").string();
    const auto made =
        test::run_cli({"make-model", "--arch", "gpt2", "--shape", "small", "--dim", "64", "--heads",
                       "4", "--layers", "2", "--seq-len", "64", "--out", path});
    REQUIRE(made.exit_code == 0);
    CHECK(made.out.find("gpt2, dim 64, hidden 256") != std::string::npos);
    const auto m = open_model(path);
    CHECK(m->config().gpt2());
    CHECK(m->config().n_positions == 64);
    const auto info = test::run_cli({"info", "--model", path});
    CHECK(info.exit_code == 0);
    CHECK(info.out.find("architecture: gpt2") != std::string::npos);
    const auto cached = test::run_cli(
        {"generate", "--model", path, "--prompt", "the cat", "--max-new-tokens", "20"});
    const auto uncached = test::run_cli({"generate", "--model", path, "--prompt", "the cat",
                                         "--max-new-tokens", "20", "--no-cache"});
    CHECK(cached.exit_code == 0);
    CHECK(uncached.exit_code == 0);
    // The text is the first line; the timings after it differ.
    CHECK(cached.out.substr(0, cached.out.find('\n')) ==
          uncached.out.substr(0, uncached.out.find('\n')));
    const auto bad = test::run_cli(
        {"make-model", "--arch", "gpt2", "--kv-heads", "2", "--heads", "4", "--out", path});
    CHECK(bad.exit_code != 0);
    CHECK(bad.err.find("as many key/value heads") != std::string::npos);
    CHECK(open_model(path)->config().n_layers == 2);  // the refused run left the file alone
}
