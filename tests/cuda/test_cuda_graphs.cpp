// CUDA Graphs of decode steps, through the emulated backend, which records a
// step's launches as closures over their arguments by value (what CUDA's stream capture keeps)
// and replays them: the graph must give the per-op path's results bit for bit at every position,
// cost one graph launch, one copy each way and one sync per token, and be recorded again exactly
// when what it was recorded for changes.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "tests/support/pass_compare.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using test::argmax;
using test::same_pass;

namespace {

// Every capture the trace takes, per-op timing off, the op-by-op kernels (not the fused ones,
// tests/cuda/test_cuda_fused.cpp): the pass the graph replaces.
Capture graph_capture() {
    Capture c;
    c.op_log = false;
    c.fused = false;
    return c;
}

struct GreedyRun {
    int steps = 0, identical = 0;  // decode steps, and those the two paths agreed on bit for bit
    LaunchCounts per_token;        // the graph backend's counts of the last step
    LaunchCounts all;              // over every decode step
};

// The prompt through both backends op by op, then `steps` greedy decode steps: on `graph`
// through its graph, on `per_op` (graphs off) op by op, the graph's token fed to both.
GreedyRun greedy_both(const Model& m, EmulatedCudaBackend& graph, EmulatedCudaBackend& per_op,
                      const std::vector<int>& prompt, int steps) {
    per_op.set_graphs_on(false);
    auto a = m.make_runner(graph), b = m.make_runner(per_op);
    ForwardResult x, y;
    Capture with_log;  // the prompt with the op strip on: per-op on both
    a->forward(prompt, with_log, x);
    b->forward(prompt, with_log, y);
    GreedyRun r;
    graph.reset_counts();
    int tok = argmax(x.logits);
    for (int s = 0; s < steps && a->kv().len < m.config().seq_len; ++s) {
        const LaunchCounts before = graph.counts();
        a->forward(std::span<const int>(&tok, 1), graph_capture(), x);
        b->forward(std::span<const int>(&tok, 1), graph_capture(), y);
        r.per_token = test::counts_since(graph.counts(), before);
        ++r.steps;
        r.identical += same_pass(x, y);
        tok = argmax(x.logits);
    }
    r.all = graph.counts();
    return r;
}

void print(const char* name, const LaunchCounts& c) {
    std::printf(
        "%s, graph, per decode token: %d host launches, %d graph launch (%d kernels, %d D2D copies "
        "inside), %d H2D, %d D2H, %d syncs, %d captures\n",
        name, c.launches, c.graph_launches, c.graph_kernels, c.graph_copies, c.h2d, c.d2h, c.syncs,
        c.captures);
}

}  // namespace

TEST_CASE("a greedy run through the decode graph gives the per-op path's bits at every step",
          "[emulated][graphs]") {
    for (const auto& model : test::llama2c_models()) {
        const std::string name = model->name();
        INFO(name);
        EmulatedCudaBackend graph, per_op;
        const auto prompt = model->tokenizer().encode("Once upon a time");
        const GreedyRun r = greedy_both(*model, graph, per_op, prompt, 40);
        CHECK(r.steps == 40);
        CHECK(r.identical == r.steps);
        // One recording for the whole run, replayed at every position.
        CHECK(r.all.captures == 1);
        CHECK(r.all.graph_launches == r.steps);
        CHECK(r.all.launches == 0);
        // Per token: the step's token id and position go in (one copy), one graph launch runs the
        // 3 + 16 L kernels and the 2 + 4 L copies gathering the captures, one copy comes back,
        // and its wait is the step's one sync.
        const int L = model->config().n_layers;
        print(name.c_str(), r.per_token);
        CHECK(r.per_token.graph_launches == 1);
        CHECK(r.per_token.launches == 0);
        CHECK(r.per_token.graph_kernels == 3 + 16 * L);
        CHECK(r.per_token.graph_copies == 2 * L + 2 * L);  // q, attention output; K, V rows
        CHECK(r.per_token.h2d == 1);
        CHECK(r.per_token.d2h == 1);
        CHECK(r.per_token.syncs == 1);
        CHECK(r.per_token.d2d == 0);
        CHECK(r.per_token.allocs == 0);
        CHECK(r.per_token.captures == 0);
    }
}

TEST_CASE("a graph replayed at a stale position is caught by the comparison",
          "[emulated][graphs]") {
    // The check above, shown failing on a deliberately broken replay: set_step() stops writing
    // the positions, so the recorded kernels keep reading the position of the recording step
    // (RoPE angle, cache row, keys attended). The first step still agrees; every later one not.
    const auto model = open_model("default");
    EmulatedCudaBackend graph, per_op;
    graph.break_step_positions_for_test(true);
    const auto prompt = model->tokenizer().encode("Once upon a time");
    const GreedyRun r = greedy_both(*model, graph, per_op, prompt, 4);
    CHECK(r.steps == 4);
    CHECK(r.identical == 1);
}

TEST_CASE("a graph is recorded again when what it was recorded for changes, and only then",
          "[emulated][graphs]") {
    const auto model = open_model("default");
    EmulatedCudaBackend graph, per_op;
    per_op.set_graphs_on(false);
    const auto prompt = model->tokenizer().encode("The capital of France is");
    auto a = model->make_batch_runner(graph, 2), b = model->make_batch_runner(per_op, 2);
    ForwardResult x[2], y[2];
    int captures = 0, launches = 0;
    // One pass on both; the graph backend's new captures and graph launches since the last call.
    auto both = [&](std::vector<SeqInput> seqs, const Capture& want) {
        a->forward_batch(seqs, want, x);
        b->forward_batch(seqs, want, y);
        for (std::size_t i = 0; i < seqs.size(); ++i) {
            INFO("sequence " << i);
            CHECK(same_pass(x[i], y[i]));
        }
        const int c = graph.counts().captures - captures,
                  g = graph.counts().graph_launches - launches;
        captures = graph.counts().captures;
        launches = graph.counts().graph_launches;
        return std::pair{c, g};
    };
    const Capture plain = graph_capture();
    Capture no_attention = plain;
    no_attention.attention = false;
    const int t0 = 7, t1 = 9;
    const SeqInput p0{0, prompt}, p1{1, std::span<const int>(prompt).first(3)};
    const SeqInput d0{0, std::span<const int>(&t0, 1)}, d1{1, std::span<const int>(&t1, 1)};

    // Prefill is op by op (rows > 1 per sequence): no graph.
    CHECK(both({p0}, plain) == std::pair{0, 0});
    CHECK(both({d0}, plain) == std::pair{1, 1});  // the first decode step records
    CHECK(both({d0}, plain) == std::pair{0, 1});  // the next ones replay
    // A prefill in slot 1 between two decode steps of slot 0 changes nothing the graph uses.
    CHECK(both({p1}, plain) == std::pair{0, 0});
    CHECK(both({d0}, plain) == std::pair{0, 1});
    // Batch 2: other rows, other slots: recorded again, then replayed.
    CHECK(both({d0, d1}, plain) == std::pair{1, 1});
    CHECK(both({d0, d1}, plain) == std::pair{0, 1});
    // The same two sequences in the other order: other slots per row.
    CHECK(both({d1, d0}, plain) == std::pair{1, 1});
    // Back to batch 1.
    CHECK(both({d0}, plain) == std::pair{1, 1});
    // Other captures: another stage layout.
    CHECK(both({d0}, no_attention) == std::pair{1, 1});
    CHECK(both({d0}, no_attention) == std::pair{0, 1});
    // No row kept (last_rows 0): logits only, another stage.
    Capture none_kept = plain;
    none_kept.last_rows = 0;
    CHECK(both({d0}, none_kept) == std::pair{1, 1});
    CHECK(both({d0}, no_attention) == std::pair{1, 1});
    // After a reset the sequence starts again at position 0: the same graph, other positions.
    a->reset_slot(0);
    b->reset_slot(0);
    CHECK(both({p0}, no_attention) == std::pair{0, 0});
    CHECK(both({d0}, no_attention) == std::pair{0, 1});
    // Per-op timing on (the op strip): op by op, the graph kept.
    CHECK(both({d0}, Capture{}) == std::pair{0, 0});
    CHECK(both({d0}, no_attention) == std::pair{0, 1});
}

TEST_CASE("a graph whose device buffer moved is refused and recorded again (another capacity)",
          "[emulated][graphs]") {
    // Two models on one backend: decode attention's partial-results buffer is sized for the
    // largest cache so far; a model with a longer context grows it, and the other model's graph,
    // which points at the old buffer, must not be replayed.
    const auto small = test::open_tiny_model("graph-cap");
    const auto large = open_model("default");
    REQUIRE(small->config().seq_len < large->config().seq_len);
    EmulatedCudaBackend graph, per_op;
    per_op.set_graphs_on(false);
    auto sa = small->make_runner(graph), sb = small->make_runner(per_op);
    auto la = large->make_runner(graph), lb = large->make_runner(per_op);
    ForwardResult x, y;
    const std::vector<int> prompt{1, 5, 9};
    for (Runner* r : {sa.get(), sb.get(), la.get(), lb.get()}) r->forward(prompt, Capture{}, x);
    const int t = 4;
    const std::span<const int> tok(&t, 1);
    auto step = [&](Runner& g, Runner& p) {
        g.forward(tok, graph_capture(), x);
        p.forward(tok, graph_capture(), y);
        return same_pass(x, y);
    };
    CHECK(step(*sa, *sb));
    CHECK(graph.counts().captures == 1);
    CHECK(step(*la, *lb));  // grows the buffer: the small model's graph is now stale
    CHECK(graph.counts().captures == 2);
    const int launched = graph.counts().graph_launches;
    CHECK(step(*sa, *sb));  // refused, recorded again, replayed
    CHECK(graph.counts().captures == 3);
    CHECK(graph.counts().graph_launches == launched + 1);
    CHECK(step(*la, *lb));  // the large model's graph still fits
    CHECK(graph.counts().captures == 3);
}

TEST_CASE(
    "a session's cached decode step timed op by op has a graph figure and a fused figure beside "
    "it, each with its kernel launches",
    "[emulated][graphs]") {
    const auto model = open_model("default");
    const int L = model->config().n_layers;
    EmulatedCudaBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 5;
    cfg.timing.runs = 1;
    Session s(*model, be, cfg);
    s.set_prompt("The weather is");
    const StepRecord& p = s.step();  // prefill: op by op only
    CHECK(p.graph_seconds == 0);
    CHECK(p.fused_seconds == 0);
    const StepRecord& d = s.step();
    CHECK(d.path == PassPath::PerOp);
    CHECK(d.forward_seconds > 0);
    CHECK(d.kernel_launches == 3 + 16 * L);
    CHECK(d.graph_seconds > 0);
    CHECK(d.graph_kernel_launches == 3 + 16 * L);
    CHECK(d.fused_seconds > 0);
    CHECK(d.fused_kernel_launches == 5 * L + 1);
    CHECK(!d.ops.ops.empty());               // the op strip came from the per-op run
    CHECK(be.counts().graph_launches == 2);  // the graph of op-by-op kernels, the fused one
    // With graphs off the fused kernels are launched one by one; nothing runs as a graph.
    be.set_graphs_on(false);
    const StepRecord& e = s.step();
    CHECK(e.graph_seconds == 0);
    CHECK(e.fused_kernel_launches == 5 * L + 1);
    // With both off nothing is measured beside the per-op run.
    be.set_fused_on(false);
    const StepRecord& f = s.step();
    CHECK(f.graph_seconds == 0);
    CHECK(f.fused_seconds == 0);
    // The fast path itself (the op strip listed, not timed op by op): the fused kernels' figures
    // are the step's, and the op strip names the kernel each op ran in.
    be.set_fused_on(true);
    be.set_graphs_on(true);
    cfg.capture.time_each_op = false;
    Session fast(*model, be, cfg);
    fast.set_prompt("The weather is");
    fast.step();
    const StepRecord& g = fast.step();
    CHECK(g.path == PassPath::Fused);
    CHECK(g.fused_seconds == g.forward_seconds);
    CHECK(g.fused_kernel_launches == 5 * L + 1);
    CHECK(g.kernel_launches == 5 * L + 1);
    CHECK(g.ops.fused_kernels() == 5 * L + 1);
    CHECK(g.ops.calls == 5 * L + 1);
}
