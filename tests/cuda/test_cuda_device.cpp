// The CUDA backend on a real device (ctest -L gpu). Registered in every build with nvcc; where no
// device answers each test prints "kvscope-gpu-skip: <reason>" and returns, which ctest counts as
// skipped (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt), not passed. KVSCOPE_REQUIRE_GPU=1
// (scripts/gpu-check.sh) turns the skip into a failure. Each op against the CPU backend on odd
// sizes; then the CPU's greedy tokens fed to both sides, logits compared at every step; the
// measured per-op times are printed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/loaders/model_loader.h"
#include "core/model/fused_ops.h"
#include "core/model/step_graphs.h"
#include "core/session/session.h"
#include "kernels/backend_factory.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/relative_difference.h"
#include "tests/cuda/teacher_forced.h"
#include "tests/support/op_harness.h"
#include "tests/support/pass_compare.h"
#include "tests/support/random_floats.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

// The cuda backend, or nullptr (the test then returns) after printing the skip line. A rehearsal
// without a device (scripts/gpu-check.sh --rehearse: KVSCOPE_GPU_TESTS_BACKEND=cuda-emulated) runs
// every test on the emulated backend instead, so that each runs to its end before a device does.
std::unique_ptr<Backend> cuda_or_skip() {
    const char* stand_in = std::getenv("KVSCOPE_GPU_TESTS_BACKEND");
    if (stand_in && std::strcmp(stand_in, "cuda-emulated") == 0) {
        std::printf("rehearsal: on cuda-emulated, not a device\n");
        BackendChoice c = make_backend("cuda-emulated");
        REQUIRE(c.backend->name() == "cuda-emulated");
        return std::move(c.backend);
    }
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) {
        const char* require = std::getenv("KVSCOPE_REQUIRE_GPU");
        if (require && std::strcmp(require, "1") == 0) FAIL("no usable CUDA device: " << why);
        std::printf("kvscope-gpu-skip: no usable CUDA device (%s)\n", why.c_str());
        return nullptr;
    }
    BackendChoice c = make_backend("cuda");
    INFO(c.note);
    REQUIRE(c.backend->name() == "cuda");
    return std::move(c.backend);
}

// Host tensors mirrored on a backend.
struct Mirror {
    Backend& be;
    std::vector<DeviceBuffer> bufs;
    DeviceSpan put(const std::vector<float>& host) {
        bufs.emplace_back(be, host.size());
        be.upload(bufs.back().span(), host.data(), host.size());
        return bufs.back().span();
    }
    std::vector<float> get(DeviceSpan s) {
        std::vector<float> h(s.size);
        be.download(h.data(), s, s.size);
        return h;
    }
};

void print_times(const char* what, const StepRecord& r) {
    std::printf("  %-28s %-8s wall %8.3f ms:", what, phase_name(r.phase), r.wall_seconds * 1e3);
    for (int i = 0; i < kOpCount; ++i)
        if (r.op_times.calls[i] > 0)
            std::printf(" %s %.3f ms/%d", op_name(static_cast<Op>(i)), r.op_times.seconds[i] * 1e3,
                        r.op_times.calls[i]);
    std::printf("\n");
}

struct DecodeRun {
    int steps = 0, identical = 0, fused = 0;  // steps; the same bits; the fast pass fused
    int tok = 0;                              // the last token chosen
};

// Greedy decode steps after the prompt both runners have taken (`x`, `y` its results): `a`
// with `fast`, `b` with `per_op`, `b`'s token fed to both, at most `max_steps` or until the
// context is full. A step is identical when logits, attention rows, K/V rows and q rows (and,
// with `attn_out`, the attention output) have the same bits.
DecodeRun decode_both(const Model& m, Runner& a, Runner& b, const Capture& fast,
                      const Capture& per_op, ForwardResult& x, ForwardResult& y, int max_steps,
                      bool attn_out) {
    using test::same_bits;
    DecodeRun r;
    r.tok = test::argmax(x.logits);
    for (; r.steps < max_steps && a.kv().len < m.config().seq_len; ++r.steps) {
        a.forward(std::span<const int>(&r.tok, 1), fast, x);
        b.forward(std::span<const int>(&r.tok, 1), per_op, y);
        r.fused += x.path == PassPath::Fused;
        r.identical += same_bits(x.logits, y.logits) && same_bits(x.attention.p, y.attention.p) &&
                       same_bits(x.kv_rows, y.kv_rows) && same_bits(x.q_rows, y.q_rows) &&
                       (!attn_out || same_bits(x.attn_out, y.attn_out));
        r.tok = test::argmax(y.logits);
    }
    return r;
}

// The same decode step of `r` (token `tok`, with `want`) 200 times from the same cache length:
// the median time in microseconds, and the kernels launched a step.
std::pair<double, double> median_step_us(Backend& gpu, Runner& r, int tok, const Capture& want,
                                         ForwardResult& x) {
    std::vector<double> t;
    const int len = r.kv().len;
    const std::uint64_t k0 = gpu.kernel_launches();
    for (int k = 0; k < 200; ++k) {
        r.truncate(len);
        const auto t0 = std::chrono::steady_clock::now();
        r.forward(std::span<const int>(&tok, 1), want, x);
        gpu.synchronize();
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                        .count());
    }
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], double(gpu.kernel_launches() - k0) / 200};
}

}  // namespace

TEST_CASE("every CUDA op on the device matches the CPU backend", "[gpu]") {
    auto gpu = cuda_or_skip();
    if (!gpu) return;
    CpuBackend cpu;
    Mirror g{*gpu, {}}, c{cpu, {}};
    std::printf("device: %s\n", gpu->device().c_str());
    for (int T : {1, 7, 33}) {
        INFO("T=" << T);
        const int n = 37, d = 53, H = 6, KVH = 2, HD = 10, dim = H * HD, kv = KVH * HD, pos0 = 5;
        const int n_keys = pos0 + T;
        // matmul
        const auto x = test::random_floats(std::size_t(T) * n, 1),
                   w = test::random_floats(std::size_t(d) * n, 2);
        auto go = g.put(std::vector<float>(std::size_t(T) * d));
        auto co = c.put(std::vector<float>(std::size_t(T) * d));
        gpu->matmul(go, g.put(x), g.put(w), T, n, d);
        cpu.matmul(co, c.put(x), c.put(w), T, n, d);
        CHECK(relative_difference(g.get(go), c.get(co)) <= 1e-5);
        // rmsnorm
        const auto rw = test::random_floats(n, 3);
        auto gr = g.put(std::vector<float>(std::size_t(T) * n));
        auto cr = c.put(std::vector<float>(std::size_t(T) * n));
        gpu->rmsnorm(gr, g.put(x), g.put(rw), T, n, 1e-6f);
        cpu.rmsnorm(cr, c.put(x), c.put(rw), T, n, 1e-6f);
        CHECK(relative_difference(g.get(gr), c.get(cr)) <= 1e-5);
        // layernorm (GPT-2's), with rw as its gain and a bias
        const auto lb = test::random_floats(n, 9);
        auto gl = g.put(std::vector<float>(std::size_t(T) * n));
        auto cl = c.put(std::vector<float>(std::size_t(T) * n));
        gpu->layernorm(gl, g.put(x), g.put(rw), g.put(lb), T, n, 1e-5f);
        cpu.layernorm(cl, c.put(x), c.put(rw), c.put(lb), T, n, 1e-5f);
        CHECK(relative_difference(g.get(gl), c.get(cl)) <= 1e-5);
        // rope, kv_append, attention (with probs)
        const auto q = test::random_floats(std::size_t(T) * dim, 4),
                   k = test::random_floats(std::size_t(T) * kv, 5),
                   v = test::random_floats(std::size_t(T) * kv, 6);
        const auto cache = test::random_floats(std::size_t(n_keys) * kv, 7);
        auto gq = g.put(q), gk = g.put(k), gv = g.put(v), gck = g.put(cache), gcv = g.put(cache);
        auto cq = c.put(q), ck = c.put(k), cv = c.put(v), cck = c.put(cache), ccv = c.put(cache);
        const auto inv_freq = test::random_floats(HD / 2, 8);  // any table: the kernel reads it
        gpu->rope(gq, gk, T, pos0, dim, kv, HD, g.put(inv_freq));
        cpu.rope(cq, ck, T, pos0, dim, kv, HD, c.put(inv_freq));
        CHECK(relative_difference(g.get(gq), c.get(cq)) <= 1e-5);
        gpu->kv_append(gck, gcv, gk, gv, pos0, T, kv);
        cpu.kv_append(cck, ccv, ck, cv, pos0, T, kv);
        CHECK(relative_difference(g.get(gck), c.get(cck)) <= 1e-5);
        const std::vector<float> zeros(std::size_t(T) * dim), pz(std::size_t(H) * T * n_keys);
        auto gout = g.put(zeros), cout = c.put(zeros), gp = g.put(pz), cp = c.put(pz);
        for (bool causal : {true, false}) {  // a decoder's mask, and an encoder's (none)
            INFO("causal " << causal);
            gpu->attention(gout, gq, gck, gcv, gp, T, pos0, H, KVH, HD, causal);
            cpu.attention(cout, cq, cck, ccv, cp, T, pos0, H, KVH, HD, causal);
            CHECK(relative_difference(g.get(gout), c.get(cout)) <= 1e-5);
            CHECK(relative_difference(g.get(gp), c.get(cp)) <= 1e-5);
        }
        // swiglu, add, embed
        auto gh1 = g.put(x), ch1 = c.put(x);
        gpu->swiglu(gh1, g.put(q), x.size() <= q.size() ? x.size() : q.size());
        cpu.swiglu(ch1, c.put(q), x.size() <= q.size() ? x.size() : q.size());
        CHECK(relative_difference(g.get(gh1), c.get(ch1)) <= 1e-5);
        auto gg = g.put(x), cg = c.put(x);  // GPT-2's gelu
        gpu->gelu(gg, x.size());
        cpu.gelu(cg, x.size());
        CHECK(relative_difference(g.get(gg), c.get(cg)) <= 1e-5);
        gpu->add(gh1, g.put(x), x.size());
        cpu.add(ch1, c.put(x), x.size());
        CHECK(relative_difference(g.get(gh1), c.get(ch1)) <= 1e-5);
        std::vector<int> tokens(T);
        for (int t = 0; t < T; ++t) tokens[t] = (5 * t + 1) % d;
        auto ge = g.put(std::vector<float>(std::size_t(T) * n));
        auto ce = c.put(std::vector<float>(std::size_t(T) * n));
        gpu->embed(ge, g.put(w), tokens.data(), T, n);
        cpu.embed(ce, c.put(w), tokens.data(), T, n);
        CHECK(relative_difference(g.get(ge), c.get(ce)) <= 1e-5);
    }
    gpu->synchronize();
    const OpTimes t = gpu->op_times();
    CHECK(t.calls[static_cast<int>(Op::Attention)] == 6);  // 3 sizes, each causal and not
    CHECK(t.seconds[static_cast<int>(Op::Matmul)] > 0);
}

// Tolerance: |logit difference| <= 1e-3 x max |CPU logit| at every step. The device's expf, sqrtf
// and fused multiply-adds round differently from glibc and the CPU's loops (the emulator, which
// runs the same kernel code with the CPU's maths, stays within 1e-4 absolute); 1e-3 of the logit
// range is far below any gap between a greedy choice and its runner-up that matters for the text.
// Every op of the harness's table (tests/support/op_harness.h) on the device: within each op's
// tolerance of the reference (the device's expf and sqrtf round their own way), the fused kernels
// the bits of their op-by-op kernels, no write outside a buffer.
TEST_CASE("op harness: every op on the device", "[gpu]") {
    auto gpu = cuda_or_skip();
    if (!gpu) return;
    const auto verdicts = test::run_op_harness({{gpu->name(), gpu.get(), ""}});
    CHECK(verdicts.size() == test::op_table().size());
    for (const test::OpVerdict& v : verdicts) {
        INFO(v.op << " (" << v.shape << ") on " << v.impl << ": " << v.difference << " against "
                  << v.tolerance << "; " << v.bits);
        CHECK(v.ok);
    }
}

TEST_CASE("the device's logits follow the CPU's at every step of the CPU's token sequence",
          "[gpu]") {
    const std::string stories = test::stories_model();
    const bool have_stories = std::filesystem::exists(stories);
    const auto model = have_stories ? open_model(stories, test::stories_tokenizer())
                                    : test::open_tiny_model("gpu-tiny");
    auto gpu = cuda_or_skip();
    if (!gpu) return;
    std::printf("model %s on %s\n", model->name().c_str(), gpu->device().c_str());
    CpuBackend cpu;
    const auto gap =
        test::teacher_forced_gap(*model, cpu, *gpu, have_stories ? "Once upon a time" : "ab", 128);
    std::printf(
        "  %d forward passes: max |logit diff| %.2e (%.2e of the logit range), "
        "max |attention diff| %.2e\n",
        gap.steps, gap.worst_logit, gap.worst_rel_logit, gap.worst_attention);
    CHECK(gap.steps > 1);
    CHECK(gap.worst_rel_logit <= 1e-3);
    CHECK(gap.worst_attention <= 1e-4);
}

TEST_CASE("generation on the device, cached and uncached: times printed", "[gpu]") {
    const std::string stories = test::stories_model();
    const bool have_stories = std::filesystem::exists(stories);
    const auto model = have_stories ? open_model(stories, test::stories_tokenizer())
                                    : test::open_tiny_model("gpu-tiny");
    auto gpu = cuda_or_skip();
    if (!gpu) return;
    std::printf("model %s on %s\n", model->name().c_str(), gpu->device().c_str());
    for (CacheMode mode : {CacheMode::Cached, CacheMode::Uncached}) {
        INFO("mode " << mode_name(mode));
        SessionConfig cfg;
        cfg.mode = mode;
        // The tiny model (no ../shared on the device) has a context of 64: "ab" is 3 tokens.
        cfg.max_new_tokens = have_stories ? 128 : 60;
        CpuBackend cpu;
        Session a(*model, cpu, cfg), b(*model, *gpu, cfg);
        const std::string prompt = have_stories ? "Once upon a time" : "ab";
        a.set_prompt(prompt);
        b.set_prompt(prompt);
        double gpu_decode = 0, cpu_decode = 0;
        while (!a.finished() && !b.finished()) {
            const StepRecord& x = a.step();
            const StepRecord& y = b.step();
            if (y.phase == Phase::Prefill) print_times(mode_name(mode), y);
            if (y.index == 64) print_times(mode_name(mode), y);
            if (y.phase == Phase::Decode) {
                gpu_decode += y.wall_seconds;
                cpu_decode += x.wall_seconds;
            }
        }
        // Free-running texts may part at a near-tie; the test above compares what matters.
        std::printf(
            "  %s: %d tokens, same text as the CPU: %s; decode %.1f tok/s GPU, %.1f tok/s "
            "CPU\n",
            mode_name(mode), b.generated(), a.tokens() == b.tokens() ? "yes" : "no",
            (b.generated() - 1) / gpu_decode, (a.generated() - 1) / cpu_decode);
        CHECK(b.generated() > 1);
    }
}

// CUDA Graphs on the device (core/model/step_graphs.h): the decode step recorded by stream capture
// and replayed gives the per-op path's bits at every position (the same kernels on the same inputs;
// the split grid covers the whole cache, its extra blocks return at once), and the two are timed
// side by side: the graph's launch latency against one host launch per kernel. Times printed,
// not asserted.
TEST_CASE("the decode graph on the device: the per-op path's bits, both times printed", "[gpu]") {
    const auto model = open_model("default");
    auto gpu = cuda_or_skip();
    if (!gpu) return;
    REQUIRE(gpu->graphs() != nullptr);
    auto a = model->make_runner(*gpu), b = model->make_runner(*gpu);
    const auto prompt = model->tokenizer().encode("Once upon a time");
    Capture per_op, graph;  // the op strip on: ops one by one; off: the graph (not fused)
    graph.op_log = false;
    graph.fused = false;
    ForwardResult x, y;
    a->forward(prompt, per_op, x);
    b->forward(prompt, per_op, y);
    const DecodeRun r = decode_both(*model, *a, *b, graph, per_op, x, y, 64, false);
    CHECK(r.identical == r.steps);
    // The same decode step 200 times each way, from the same cache length: medians.
    std::printf("  decode step, default model, median of 200: %.3f ms op by op, %.3f ms graph\n",
                median_step_us(*gpu, *b, r.tok, per_op, x).first / 1000,
                median_step_us(*gpu, *a, r.tok, graph, x).first / 1000);
}

// The fused decode step on the device (core/model/fused_ops.h): the op-by-op path's bits at every
// step of a greedy run (the same bodies, the same order, explicit fmaf, -fmad=false), with
// programmatic dependent launch where the device has it; then the same step timed each way,
// median of 200.
TEST_CASE("the fused decode step on the device: the op-by-op path's bits, three times printed",
          "[gpu]") {
    const auto model = open_model("default");
    auto gpu = cuda_or_skip();
    if (!gpu) return;
    REQUIRE(gpu->fused() != nullptr);
    auto a = model->make_runner(*gpu), b = model->make_runner(*gpu);
    const auto prompt = model->tokenizer().encode("Once upon a time");
    Capture per_op, graph, fused;
    graph.op_log = false;
    graph.fused = false;
    fused.op_log = false;
    ForwardResult x, y;
    a->forward(prompt, per_op, x);
    b->forward(prompt, per_op, y);
    const DecodeRun r = decode_both(*model, *a, *b, fused, per_op, x, y, 40, true);
    CHECK(r.fused == r.steps);
    CHECK(r.identical == r.steps);
    const int tok = r.tok;
    const auto [po, po_k] = median_step_us(*gpu, *b, tok, per_op, x);
    const auto [gr, gr_k] = median_step_us(*gpu, *b, tok, graph, x);
    const auto [fu, fu_k] = median_step_us(*gpu, *a, tok, fused, x);
    std::printf(
        "  decode step, default model, median of 200: op by op %.1f us (%.0f kernels), graph "
        "%.1f us (%.0f kernels), fused %.1f us (%.0f kernels)\n",
        po, po_k, gr, gr_k, fu, fu_k);
    CHECK(fu_k <= 5 * model->config().n_layers + 3);
    // Where the fused step's time goes, for the next step toward 30 us: each fused kernel's own
    // time (launched one by one, CUDA events around each; the gate holds the stream where modules
    // load eagerly), and a token's fixed cost (the step's host-to-device copy, a graph of one
    // small kernel, the logits' copy back and the sync): the fused graph's time less the kernels'
    // sum is what a graph node and the fixed cost take.
    gpu->graphs()->set_graphs_on(false);
    gpu->set_record_calls(true);
    const char* names[] = {"norm_qkv", "attention", "matvec_add wo", "norm_gate_up",
                           "matvec_add w2"};
    std::vector<std::vector<double>> per(static_cast<std::size_t>(fu_k + 0.5));
    const int len = a->kv().len;
    for (int k = 0; k < 200; ++k) {
        a->truncate(len);
        gpu->reset_op_times();
        a->forward(std::span<const int>(&tok, 1), fused, x);
        std::size_t i = 0;
        for (const OpCall& c : gpu->op_calls())
            if (c.op == Op::Fused && i < per.size()) per[i++].push_back(c.seconds * 1e6);
    }
    gpu->set_record_calls(false);
    gpu->graphs()->set_graphs_on(true);
    double sum = 0;
    std::printf("  fused kernels one by one, median of 200 (us):");
    for (std::size_t i = 0; i < per.size(); ++i) {
        if (per[i].empty()) continue;
        std::sort(per[i].begin(), per[i].end());
        const double m = per[i][per[i].size() / 2];
        sum += m;
        std::printf(" %s %.2f;", i + 1 == per.size() ? "norm_logits" : names[i % 5], m);
    }
    std::printf(" sum %.1f us\n", sum);
    // The fixed cost: one small kernel recorded as a graph, replayed as a step is.
    DeviceBuffer one(*gpu, 64), logits(*gpu, model->config().vocab_size);
    std::vector<float> host(logits.span().size);
    StepGraphs& g = *gpu->graphs();
    g.begin_capture();
    gpu->add(one.span(), one.span(), 64);
    const int id = g.end_capture();
    std::vector<double> fixed;
    const int position = 0;
    for (int k = 0; k < 201; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        g.set_step(&tok, &position, 1);
        REQUIRE(g.replay(id));
        gpu->download(host.data(), logits.span(), host.size());
        if (k > 0)
            fixed.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count());
    }
    g.drop(id);
    std::sort(fixed.begin(), fixed.end());
    std::printf(
        "  a token's fixed cost (step copy, a graph of one kernel, logits copied back, sync), "
        "median of 200: %.1f us; fused graph %.1f us = kernels %.1f + the rest %.1f\n",
        fixed[fixed.size() / 2], fu, sum, fu - sum);
    CHECK(sum > 0);
}

// cuBLAS for T > 1 (kernels/cuda/cublas_gemm.h): float32 against the CPU within float32's
// rounding, TF32 and BF16 tensor cores within their mantissas; and 16-bit weights read on the
// device (widened for cuBLAS at T > 1, read in 8-value chunks at T == 1).
TEST_CASE("cuBLAS matmuls on the device match the CPU backend, fp32, tf32 and bf16", "[gpu]") {
    auto gpu = cuda_or_skip();
    if (!gpu) return;
    const std::string note = set_gemm(*gpu, GemmPrecision::F32);
    std::printf("  %s\n", note.c_str());
    CHECK(note.find(gpu->name() == "cuda" ? "cuBLAS" : "emulator") != std::string::npos);
    CpuBackend cpu;
    Mirror g{*gpu, {}}, c{cpu, {}};
    for (int T : {2, 17, 512}) {
        const int n = 768, d = 2048;
        const auto x = test::random_floats(std::size_t(T) * n, 11),
                   w = test::random_floats(std::size_t(d) * n, 12);
        auto co = c.put(std::vector<float>(std::size_t(T) * d));
        cpu.matmul(co, c.put(x), c.put(w), T, n, d);
        const auto want = c.get(co);
        for (auto [p, tol] : {std::pair{GemmPrecision::F32, 1e-5},
                              {GemmPrecision::TF32, 3e-3},
                              {GemmPrecision::BF16, 2e-2}}) {
            INFO("T=" << T << " " << gemm_precision_name(p));
            set_gemm(*gpu, p);
            auto go = g.put(std::vector<float>(std::size_t(T) * d));
            gpu->matmul(go, g.put(x), g.put(w), T, n, d);
            CHECK(relative_difference(g.get(go), want) <= tol);
        }
    }
    set_gemm(*gpu, GemmPrecision::F32);
    // 16-bit weights: the greedy text of the CPU's compact matmul, cached and with a prompt.
    for (GgmlType type : {GgmlType::F16, GgmlType::BF16}) {
        INFO(ggml_type_name(type));
        const auto m = open_model("default", {}, type);
        SessionConfig cfg;
        cfg.max_new_tokens = 40;
        Session on_gpu(*m, *gpu, cfg), on_cpu(*m, cpu, cfg);
        on_gpu.set_prompt("Once upon a time");
        on_cpu.set_prompt("Once upon a time");
        while (!on_gpu.finished()) on_gpu.step();
        while (!on_cpu.finished()) on_cpu.step();
        CHECK(on_gpu.tokens() == on_cpu.tokens());
    }
}

// A prompt past the 12,000 keys one block's shared memory held: the flash-style prefill against
// the CPU, probs included.
TEST_CASE("attention over 12,300 keys on the device matches the CPU", "[gpu]") {
    auto gpu = cuda_or_skip();
    if (!gpu) return;
    CpuBackend cpu;
    Mirror g{*gpu, {}}, c{cpu, {}};
    const int H = 8, KVH = 2, HD = 64, T = 16, pos0 = 12300, n_keys = pos0 + T;
    const auto q = test::random_floats(std::size_t(T) * H * HD, 21),
               k = test::random_floats(std::size_t(n_keys) * KVH * HD, 22),
               v = test::random_floats(std::size_t(n_keys) * KVH * HD, 23);
    const std::vector<float> zeros(q.size()), pz(std::size_t(H) * T * n_keys);
    auto go = g.put(zeros), co = c.put(zeros), gp = g.put(pz), cp = c.put(pz);
    gpu->attention(go, g.put(q), g.put(k), g.put(v), gp, T, pos0, H, KVH, HD, true);
    cpu.attention(co, c.put(q), c.put(k), c.put(v), cp, T, pos0, H, KVH, HD, true);
    CHECK(relative_difference(g.get(go), c.get(co)) <= 1e-4);
    CHECK(relative_difference(g.get(gp), c.get(cp)) <= 1e-4);
}
