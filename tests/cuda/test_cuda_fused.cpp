// The fused decode step (core/model/fused_ops.h, kernels/cuda/fused_decode.cuh) through the
// emulated backend: 5 kernels a layer and 1 a token, one graph launch, no copies gathering the
// captures; and the op-by-op path's results bit for bit at every step of a greedy run (logits,
// attention rows, q, the attention output, K/V rows), for float32, f16 and bf16 weights and a
// model with q/k/v biases. A fused kernel summed in another order is caught by the same check.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/loaders/model_loader.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "kernels/emu/host_block.h"
#include "tests/support/pass_compare.h"
#include "tests/support/qwen2_model.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using test::argmax;
using test::same_pass;

namespace {

// Every capture the trace takes, per-op timing off: the fast path.
Capture fast() {
    Capture c;
    c.op_log = false;
    return c;
}

struct Run {
    int steps = 0, identical = 0;
    PassPath path = PassPath::PerOp;
    LaunchCounts last;  // the fused backend's counts of the last step
};

// The prompt op by op on both backends, then `steps` greedy decode steps: on `fused` through
// its fast path, on `per_op` with every op timed, the fast path's token fed to both.
// persistent_grid > 0: the fused kernels' blocks in a persistent grid's order
// (emu::set_block_order).
Run greedy_both(const Model& m, EmulatedCudaBackend& fused, EmulatedCudaBackend& per_op,
                const std::string& prompt, int steps, unsigned persistent_grid = 0) {
    auto a = m.make_runner(fused), b = m.make_runner(per_op);
    ForwardResult x, y;
    const auto ids = m.tokenizer().encode(prompt);
    a->forward(ids, Capture{}, x);
    b->forward(ids, Capture{}, y);
    Run r;
    int tok = argmax(x.logits);
    for (int s = 0; s < steps && a->kv().len < m.config().seq_len; ++s) {
        const LaunchCounts before = fused.counts();
        emu::set_block_order(persistent_grid);
        a->forward(std::span<const int>(&tok, 1), fast(), x);
        emu::set_block_order(0);
        b->forward(std::span<const int>(&tok, 1), Capture{}, y);
        r.last = test::counts_since(fused.counts(), before);
        r.path = x.path;
        ++r.steps;
        r.identical += same_pass(x, y);
        tok = argmax(x.logits);
    }
    return r;
}

}  // namespace

TEST_CASE("a fused decode step: 5 kernels a layer, 1 a token, one graph launch, no copies",
          "[emulated][fused]") {
    for (const auto& model : test::llama2c_models()) {
        const std::string name = model->name();
        INFO(name);
        const int L = model->config().n_layers;
        for (bool graphs : {true, false}) {
            INFO("graphs " << graphs);
            EmulatedCudaBackend fused, per_op;
            fused.set_graphs_on(graphs);
            const Run r = greedy_both(*model, fused, per_op, "Once upon a time", 3);
            CHECK(r.path == PassPath::Fused);
            const LaunchCounts& c = r.last;
            std::printf(
                "%s, fused%s, per decode token: %d host launches, %d graph launch (%d kernels "
                "inside), %d D2D copies, %d H2D, %d D2H, %d syncs\n",
                name.c_str(), graphs ? " (one graph)" : "", c.launches, c.graph_launches,
                c.graph_kernels, c.d2d + c.graph_copies, c.h2d, c.d2h, c.syncs);
            CHECK(c.launches + c.graph_kernels == 5 * L + 1);
            CHECK(c.launches + c.graph_kernels <= 5 * L + 3);
            CHECK(c.graph_launches == (graphs ? 1 : 0));
            CHECK(c.d2d + c.graph_copies == 0);  // captures are the kernels' own stores
            CHECK(c.h2d == 1);                   // the token (and position, in a graph)
            CHECK(c.d2h == 1);
            CHECK(c.syncs == 1);
            CHECK(c.allocs == 0);
        }
        if (name == "default") CHECK(5 * L + 1 <= 23);
    }
}

TEST_CASE("the fused decode step gives the op-by-op path's bits at every step of a greedy run",
          "[emulated][fused]") {
    for (const auto& model : test::llama2c_models()) {
        const std::string name = model->name();
        INFO(name);
        // As one graph a step, 40 tokens; launched one by one, a few.
        for (bool graphs : {true, false}) {
            INFO("graphs " << graphs);
            EmulatedCudaBackend fused, per_op;
            fused.set_graphs_on(graphs);
            const int steps = graphs ? 40 : 6;
            const Run r = greedy_both(*model, fused, per_op, "Once upon a time", steps);
            CHECK(r.steps == steps);
            CHECK(r.identical == r.steps);
        }
    }
    // 16-bit weights (read in 8-value chunks) and Qwen2's q/k/v biases.
    for (GgmlType type : {GgmlType::F16, GgmlType::BF16}) {
        INFO(ggml_type_name(type));
        const auto m = open_model("default", {}, type);
        EmulatedCudaBackend fused, per_op;
        const Run r = greedy_both(*m, fused, per_op, "Once upon a time", 8);
        CHECK(r.path == PassPath::Fused);
        CHECK(r.identical == r.steps);
    }
    const auto base = open_model("default");
    const auto qwen = test::with_qkv_biases(*base, 7);
    EmulatedCudaBackend fused, per_op;
    const Run r = greedy_both(*qwen, fused, per_op, "Once upon a time", 8);
    CHECK(r.path == PassPath::Fused);
    CHECK(r.identical == r.steps);
}

// The persistent decode kernel's schedule (docs/cuda.md): each fused kernel's blocks run as a
// persistent grid takes them, block b running b, b + grid, ... of every stage. The bits are the
// op-by-op path's whatever the grid, the attention's last-block combine included.
TEST_CASE("the fused step in a persistent grid's block order gives the op-by-op path's bits",
          "[emulated][fused]") {
    const auto model = open_model("default");
    for (unsigned grid : {1u, 3u, 7u}) {
        INFO("a persistent grid of " << grid << " blocks");
        EmulatedCudaBackend fused, per_op;
        // About 70 prompt tokens: attention over two chunks of 64 keys, combined by a last block.
        std::string prompt;
        for (int i = 0; i < 3; ++i)
            prompt += "Once upon a time there was a girl. She liked the sun. ";
        const Run r = greedy_both(*model, fused, per_op, prompt, 40, grid);
        CHECK(r.path == PassPath::Fused);
        CHECK(r.steps == 40);
        CHECK(r.identical == r.steps);
    }
}

TEST_CASE("a fused kernel summed in another order is caught by the bit-for-bit check",
          "[emulated][fused]") {
    // The check above, shown failing: matvec_add (wo and w2) sums each lane's chunks in reverse.
    // Every value is still a correct float32 sum (the logits stay close), but not the op-by-op
    // path's bits, from the first decode step on.
    const auto model = open_model("default");
    EmulatedCudaBackend fused, per_op;
    fused.reverse_fused_sums_for_test(true);
    const Run r = greedy_both(*model, fused, per_op, "Once upon a time", 4);
    CHECK(r.steps == 4);
    CHECK(r.identical == 0);
}

TEST_CASE(
    "a recorded decode step downloads probs rows for its bucket of keys, not the capacity, and "
    "is recorded again when the keys outgrow it",
    "[emulated][fused][graphs]") {
    const auto model = open_model("default");
    const ModelConfig& c = model->config();
    REQUIRE(c.seq_len > 128);
    EmulatedCudaBackend be;
    auto run = model->make_runner(be);
    ForwardResult x;
    const std::vector<int> prompt(60, 5);
    run->forward(prompt, Capture{}, x);
    int tok = 7;
    std::vector<int> captures;
    std::size_t most = 0;
    for (int s = 0; s < 10; ++s) {  // keys 61 .. 70: buckets of 64, then 128
        const LaunchCounts before = be.counts();
        run->forward(std::span<const int>(&tok, 1), fast(), x);
        const LaunchCounts d = test::counts_since(be.counts(), before);
        captures.push_back(d.captures);
        most = std::max(most, d.d2h_floats);
    }
    CHECK(captures == std::vector<int>{1, 0, 0, 0, 1, 0, 0, 0, 0, 0});
    // logits, and the attention rows of every layer and head at 128 floats apart
    const std::size_t L = c.n_layers, H = c.n_heads;
    CHECK(most < c.vocab_size + L * H * c.seq_len);
    CHECK(most >= c.vocab_size + L * H * 128);
}
