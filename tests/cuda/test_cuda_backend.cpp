// The CUDA backend as a whole, through the emulator: the run-time backend choice, the CLI's
// --backend, and whole generations on stories260K against the CPU backend.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/backend_factory.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/op_gate.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "tests/cuda/teacher_forced.h"
#include "tests/support/gpt2_model.h"
#include "tests/support/mask_deltas.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
    return d;
}

}  // namespace

TEST_CASE("make_backend: cuda-emulated always, cuda only with a device, auto falls back",
          "[emulated][backend]") {
    const BackendChoice e = make_backend("cuda-emulated");
    CHECK(e.backend->name() == "cuda-emulated");
    CHECK_THROWS_AS(make_backend("opencl"), Error);

    const std::string why = cuda_unavailable_reason();
    if (!cuda_compiled()) CHECK(!why.empty());
    const BackendChoice a = make_backend("auto");
    if (why.empty()) {
        CHECK(a.backend->name() == "cuda");
        CHECK(make_backend("cuda").backend->name() == "cuda");
    } else {
        CHECK(a.backend->name() == "cpu");
        // No GPU here at all: a few words, the runtime's in the detail; else the reason.
        if (no_nvidia_gpu(why)) {
            CHECK(a.note == "no NVIDIA GPU found: running on the CPU");
            CHECK(a.detail == why);
        } else {
            CHECK(a.note.find(why) != std::string::npos);
        }
        try {
            make_backend("cuda");
            FAIL("--backend cuda without a device must throw");
        } catch (const Error& err) {
            const std::string msg = err.what();
            CHECK(msg.find('\n') == std::string::npos);
            CHECK(msg.find(why) != std::string::npos);
        }
    }
}

// The op-timing gate holds the stream while the host queues a step; where a call it makes then
// waits for the device, the gate waits out its 2 s timeout. So: eager module loading only, no
// tool injected (compute-sanitizer), not turned off.
TEST_CASE("the op-timing gate only where no launch can wait for the device", "[emulated]") {
    GateEnvironment e;
    e.module_loading = "EAGER";
    CHECK(op_gate_refusal(e).empty());
    for (const char* lazy : {"", "LAZY", "eager-ish"}) {
        e.module_loading = lazy;
        CHECK(op_gate_refusal(e).find("lazily") != std::string::npos);
    }
    e.module_loading = "EAGER";
    e.tool_injected = true;
    CHECK(op_gate_refusal(e).find("tool") != std::string::npos);
    e.tool_injected = false;
    e.turned_off = true;
    CHECK(op_gate_refusal(e) == "KVSCOPE_CUDA_GATE=0");
}

TEST_CASE("emulated backend runs a tiny model's generation like the CPU backend",
          "[emulated][backend]") {
    const auto model = test::open_tiny_model("emu-tiny");
    for (CacheMode mode : {CacheMode::Cached, CacheMode::Uncached}) {
        SessionConfig cfg;
        cfg.mode = mode;
        cfg.max_new_tokens = 12;
        CpuBackend cpu;
        EmulatedCudaBackend emu;
        Session a(*model, cpu, cfg), b(*model, emu, cfg);
        a.set_prompt("ab");
        b.set_prompt("ab");
        while (!a.finished()) a.step();
        while (!b.finished()) b.step();
        CHECK(a.tokens() == b.tokens());
        REQUIRE(a.trace().steps().size() == b.trace().steps().size());
        for (std::size_t i = 0; i < a.trace().steps().size(); ++i) {
            const StepRecord &x = a.trace().steps()[i], &y = b.trace().steps()[i];
            CHECK(max_abs_diff(x.logits, y.logits) <= 1e-4);
            CHECK(max_abs_diff(x.attention.p, y.attention.p) <= 1e-5);
            CHECK(max_abs_diff(x.kv_rows, y.kv_rows) <= 1e-5);
            CHECK(y.backend == "cuda-emulated");
            CHECK(y.op_times.calls[static_cast<int>(Op::Attention)] > 0);
        }
    }
}

TEST_CASE("bidirectional through the emulated kernels: K/V rows move from layer 1 on, not in 0",
          "[emulated][backend][mask]") {
    const auto model = open_model("default");
    EmulatedCudaBackend emu;
    test::check_mask_deltas(*model, emu, "Once upon a time");
}

// The comparison the GPU test makes (tests/cuda/test_cuda_device.cpp), here on the emulator, so the
// harness itself runs in CI: the CPU's greedy tokens fed to both, logits compared at every step.
TEST_CASE("teacher-forced: the emulated kernels' logits follow the CPU's at every step",
          "[emulated][backend]") {
    const auto model = test::open_tiny_model("emu-forced");
    CpuBackend cpu;
    EmulatedCudaBackend emu;
    const auto gap = test::teacher_forced_gap(*model, cpu, emu, "ab", 40);
    CHECK(gap.steps == 41);
    CHECK(gap.worst_rel_logit <= 1e-5);
    CHECK(gap.worst_attention <= 1e-5);
}

// GPT-2's design through the kernels: layernorm and gelu, the bias adds, the position rows
// looked up by the embed kernel, and attention without RoPE.
TEST_CASE("a GPT-2-shaped model through the emulated kernels follows the CPU at every step",
          "[emulated][backend][gpt2]") {
    const auto base = open_model("default");
    const auto model = test::random_gpt2(*base, 7);
    CpuBackend cpu;
    EmulatedCudaBackend emu;
    const auto gap = test::teacher_forced_gap(*model, cpu, emu, "Once upon a time", 24);
    CHECK(gap.steps == 25);
    CHECK(gap.worst_rel_logit <= 1e-5);
    CHECK(gap.worst_attention <= 1e-5);
    // Its decode steps run op by op, and say so: no "as one CUDA graph" time (the Llama
    // model's steps on the same backend have one).
    for (const Model* m : std::vector<const Model*>{model.get(), base.get()}) {
        SessionConfig cfg;
        cfg.max_new_tokens = 3;
        Session s(*m, emu, cfg);
        s.set_prompt("Once");
        s.step();
        const StepRecord& r = s.step();
        CHECK(r.phase == Phase::Decode);
        CHECK((r.graph_seconds > 0) == !m->config().gpt2());
    }
}

#if KVSCOPE_HAVE_SHARED
TEST_CASE("stories260K through the emulated CUDA kernels: same greedy text, logits within 1e-4",
          "[emulated][backend]") {
    const auto model = open_model(test::stories_model(), test::stories_tokenizer());
    for (CacheMode mode : {CacheMode::Cached, CacheMode::Uncached}) {
        INFO("mode " << mode_name(mode));
        SessionConfig cfg;
        cfg.mode = mode;
        cfg.max_new_tokens = 40;
        CpuBackend cpu;
        EmulatedCudaBackend emu;
        Session a(*model, cpu, cfg), b(*model, emu, cfg);
        a.set_prompt("Once upon a time");
        b.set_prompt("Once upon a time");
        double worst_logit = 0, worst_attention = 0;
        while (!a.finished()) {
            REQUIRE(!b.finished());
            const StepRecord& x = a.step();
            const StepRecord& y = b.step();
            CHECK(x.token_out == y.token_out);
            worst_logit = std::max(worst_logit, max_abs_diff(x.logits, y.logits));
            worst_attention = std::max(worst_attention, max_abs_diff(x.attention.p, y.attention.p));
        }
        CHECK(b.finished());
        CHECK(a.tokens() == b.tokens());
        CHECK(a.text() == b.text());
        CHECK(a.generated() == 40);
        CHECK(worst_logit <= 1e-4);
        CHECK(worst_attention <= 1e-5);
    }
}

TEST_CASE("kvscope-cli --backend: cuda without a device is exit 2, auto says why, emulated = cpu",
          "[emulated][backend][cli]") {
    const std::vector<std::string> gen = {"generate", "--model",          test::stories_model(),
                                          "--prompt", "Once upon a time", "--max-new-tokens",
                                          "24"};
    auto with = [&](const std::string& backend) {
        auto args = gen;
        args.insert(args.end(), {"--backend", backend});
        return test::run_cli(args);
    };
    const auto cpu = with("cpu");
    REQUIRE(cpu.exit_code == 0);
    const auto emu = with("cuda-emulated");
    CHECK(emu.exit_code == 0);
    CHECK(emu.out == cpu.out);
    CHECK(emu.err.find("emulat") != std::string::npos);

    const std::string why = cuda_unavailable_reason();
    const auto cuda = with("cuda");
    const auto autob = with("auto");
    CHECK(autob.exit_code == 0);
    CHECK(autob.out == cpu.out);
    if (why.empty()) {
        CHECK(cuda.exit_code == 0);
        CHECK(cuda.out == cpu.out);
    } else {
        INFO("stderr: " << cuda.err);
        CHECK(cuda.exit_code == 2);
        CHECK(test::one_line(cuda.err));
        CHECK(cuda.err.find(why) != std::string::npos);
        if (no_nvidia_gpu(why)) {
            CHECK(autob.err.find("no NVIDIA GPU found: running on the CPU;") != std::string::npos);
            CHECK(autob.err.find(why) == std::string::npos);
            auto args = gen;
            args.insert(args.end(), {"--backend", "auto", "--verbose"});
            CHECK(test::run_cli(args).err.find("running on the CPU (" + why + ")") !=
                  std::string::npos);
        } else {
            CHECK(autob.err.find(why) != std::string::npos);
        }
    }
}
#endif
