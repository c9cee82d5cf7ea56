// How the CUDA backends fail, played through the emulated backend's injected
// errors (EmulatedCudaBackend::inject, KVSCOPE_EMU_FAULT), which keeps and reports them through the
// same FaultLedger as the device backend: release never throws, a device fault is reported once
// by the next sync, KVSCOPE_CUDA_SYNC=1 names the op, `auto` falls back to the CPU with the reason.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/backend_factory.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/device_info.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

// Sets an environment variable for one scope (the backends read it when they are made).
class ScopedEnv {
  public:
    ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
    ~ScopedEnv() { unsetenv(name_); }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

  private:
    const char* name_;
};

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

EmuFault fault(EmuFault::Kind kind, Op op, int call) {
    EmuFault f;
    f.kind = kind;
    f.op = op;
    f.call = call;
    return f;
}

// One decode-sized forward pass of the tiny model on `be`, as a Session runs it.
std::string run_tiny(Backend& be) {
    const auto model = test::open_tiny_model("faults");
    return error_of([&] {
        SessionConfig cfg;
        cfg.max_new_tokens = 4;
        Session s(*model, be, cfg);
        s.set_prompt("ab");
        while (!s.finished()) s.step();
    });
}

}  // namespace

TEST_CASE("a device fault: buffers free without throwing, the next sync reports it once",
          "[emulated][faults]") {
    EmulatedCudaBackend be;
    const std::string msg = error_of([&] {
        DeviceBuffer a(be, 16), b(be, 16);
        be.inject(fault(EmuFault::Kind::Fault, Op::Add, 1));
        be.add(a.span(), b.span(), 16);             // faults on the "device"; nothing says so yet
        be.add(a.span(), b.span(), 16);             // queued after it: does not run
        throw Error("unwinding past the buffers");  // ~DeviceBuffer calls release() twice
    });
    CHECK(msg == "unwinding past the buffers");  // no std::terminate, no cudaFree error instead
    const std::string reported = error_of([&] { be.synchronize(); });
    CHECK(reported.find("illegal memory access") != std::string::npos);
    // cudaFree saw it first (it waits for the device), and says what was queued last.
    CHECK(reported.find("CUDA error in cudaFree, after add was queued") == 0);
    CHECK(reported.find("KVSCOPE_CUDA_SYNC=1") != std::string::npos);
    CHECK(reported.find('\n') == std::string::npos);
    CHECK(error_of([&] { be.synchronize(); }).empty());  // once
    // Sticky: a later launch fails at once, naming itself.
    DeviceBuffer c(be, 4);
    CHECK(error_of([&] { be.add(c.span(), c.span(), 4); }).find("CUDA error in add") == 0);
}

TEST_CASE("KVSCOPE_CUDA_SYNC=1 waits after every op and names the op that faulted",
          "[emulated][faults]") {
    ScopedEnv sync("KVSCOPE_CUDA_SYNC", "1");
    EmulatedCudaBackend be;
    DeviceBuffer a(be, 16);
    be.inject(fault(EmuFault::Kind::Fault, Op::Add, 2));
    be.reset_counts();
    be.add(a.span(), a.span(), 16);
    CHECK(be.counts().syncs == 1);  // one wait per op
    const std::string msg = error_of([&] { be.add(a.span(), a.span(), 16); });
    CHECK(msg.rfind("CUDA error in add (KVSCOPE_CUDA_SYNC=1", 0) == 0);
}

TEST_CASE("a refused launch throws at once, named by its op, a failed cudaFree waits for a sync",
          "[emulated][faults]") {
    EmulatedCudaBackend be;
    DeviceBuffer a(be, 8);
    be.inject(fault(EmuFault::Kind::Launch, Op::Matmul, 1));
    const std::string msg = error_of([&] { be.matmul(a.span(), a.span(), a.span(), 1, 2, 2); });
    CHECK(msg == "CUDA error in matmul: no kernel image is available for execution");

    EmuFault r;
    r.kind = EmuFault::Kind::Release;
    r.error = "invalid argument";
    be.inject(r);
    { DeviceBuffer gone(be, 4); }  // release fails: kept
    // The refused matmul was never queued, so nothing is named before cudaFree.
    CHECK(error_of([&] { be.synchronize(); }) == "CUDA error in cudaFree: invalid argument");
    CHECK(error_of([&] { be.synchronize(); }).empty());
}

TEST_CASE("a session whose device faults mid-step ends with one named error, no crash",
          "[emulated][faults]") {
    {
        EmulatedCudaBackend be;
        be.inject(fault(EmuFault::Kind::Fault, Op::Attention, 3));
        const std::string msg = run_tiny(be);
        CHECK(msg.find("CUDA error found at a stream sync") == 0);
        CHECK(msg.find("illegal memory access") != std::string::npos);
    }
    {
        ScopedEnv sync("KVSCOPE_CUDA_SYNC", "1");
        EmulatedCudaBackend be;
        be.inject(fault(EmuFault::Kind::Fault, Op::Attention, 3));
        CHECK(run_tiny(be).rfind("CUDA error in attention (KVSCOPE_CUDA_SYNC=1", 0) == 0);
    }
}

// The fused attention's tickets count the split blocks done per kv head and must be zero at every
// launch (kernels/cuda/fused_decode.cuh). A launch cut short by a fault leaves some counted: the
// sync that reports the fault zeroes them again.
TEST_CASE("a fused attention cut short by a fault: its tickets are zero again after the report",
          "[emulated][faults][fused]") {
    EmulatedCudaBackend be;
    const int n_heads = 4, n_kv_heads = 2, head_dim = 16, pos = 149, capacity = 160;
    DeviceBuffer out(be, n_heads * head_dim), q(be, n_heads * head_dim),
        k(be, std::size_t(capacity) * n_kv_heads * head_dim),
        v(be, std::size_t(capacity) * n_kv_heads * head_dim);
    FusedOps::Attend a;
    a.out = out.span(), a.q = q.span(), a.cache_k = k.span(), a.cache_v = v.span();
    a.pos = pos, a.n_heads = n_heads, a.n_kv_heads = n_kv_heads, a.head_dim = head_dim;
    be.attention(a);  // 150 keys: three chunks of 64 a kv head, each a block of the split
    be.synchronize();
    CHECK(be.tickets_zero());
    be.inject(fault(EmuFault::Kind::Fault, Op::Fused, 1));
    be.attention(a);  // every block but the last has taken its ticket when it faults
    CHECK(error_of([&] { be.synchronize(); }).find("illegal memory access") != std::string::npos);
    CHECK(be.tickets_zero());
}

TEST_CASE("KVSCOPE_EMU_FAULT: specs parse, bad ones are one-line errors", "[emulated][faults]") {
    const EmuFault f = parse_emu_fault("attention:3:fault");
    CHECK(f.op == Op::Attention);
    CHECK(f.call == 3);
    CHECK(f.kind == EmuFault::Kind::Fault);
    CHECK(parse_emu_fault("release:2:release").kind == EmuFault::Kind::Release);
    for (const char* bad : {"", "attention", "attention:3", "attention:0:fault", "attn:1:fault",
                            "attention:x:fault", "attention:1:boom", "release:1:fault"})
        CHECK_THROWS_AS(parse_emu_fault(bad), Error);
}

TEST_CASE("auto: a GPU that fails its probe or its set-up leaves the CPU backend, with the reason",
          "[emulated][faults][backend]") {
    int made = 0;
    const auto emulated = [&]() -> std::unique_ptr<Backend> {
        ++made;
        return std::make_unique<EmulatedCudaBackend>();
    };
    // The probe the cuda backend runs, played on the emulator: one kernel on a stream to its end.
    const auto probe_with = [](const EmuFault* f) {
        return [f]() -> std::string {
            EmulatedCudaBackend be;
            if (f) be.inject(*f);
            return error_of([&] {
                DeviceBuffer one(be, 1);
                be.add(one.span(), one.span(), 1);
                be.synchronize();
            });
        };
    };
    const BackendChoice ok = choose_auto({probe_with(nullptr), emulated});
    CHECK(ok.backend->name() == "cuda-emulated");
    CHECK(made == 1);

    const EmuFault no_image = fault(EmuFault::Kind::Launch, Op::Add, 1);
    const BackendChoice a = choose_auto({probe_with(&no_image), emulated});
    CHECK(a.backend->name() == "cpu");
    CHECK(a.note ==
          "CPU backend: no usable CUDA device (CUDA error in add: no kernel image is "
          "available for execution)");
    const EmuFault dead = fault(EmuFault::Kind::Fault, Op::Add, 1);
    const BackendChoice b = choose_auto({probe_with(&dead), emulated});
    CHECK(b.backend->name() == "cpu");
    CHECK(b.note.find("illegal memory access") != std::string::npos);
    CHECK(made == 1);  // a failed probe builds nothing

    const BackendChoice c = choose_auto({[] { return std::string(); },
                                         []() -> std::unique_ptr<Backend> {
                                             throw Error(
                                                 "CUDA error in cudaStreamCreate: all CUDA-capable "
                                                 "devices are busy or unavailable");
                                         }});
    CHECK(c.backend->name() == "cpu");
    CHECK(c.note.find("could not be set up (CUDA error in cudaStreamCreate: all CUDA-capable") !=
          std::string::npos);
}

TEST_CASE("auto on a machine without an NVIDIA GPU says so in a few words, the runtime's below",
          "[emulated][faults][backend]") {
    const std::string driver = "CUDA driver version is insufficient for CUDA runtime version";
    auto unused = []() -> std::unique_ptr<Backend> { return nullptr; };
    const BackendChoice none =
        choose_auto({[&] { return driver; }, unused, [](const std::string&) { return true; }});
    CHECK(none.backend->name() == "cpu");
    CHECK(none.note == "no NVIDIA GPU found: running on the CPU");
    CHECK(none.detail == driver);
    // A GPU that is there and fails keeps its reason in the note.
    const BackendChoice broken =
        choose_auto({[&] { return driver; }, unused, [](const std::string&) { return false; }});
    CHECK(broken.note == "CPU backend: no usable CUDA device (" + driver + ")");
    CHECK(broken.detail.empty());
    CHECK(no_nvidia_gpu("no CUDA device found"));
    CHECK(no_nvidia_gpu("cudaGetDeviceCount: no CUDA-capable device is detected"));
}

TEST_CASE("the cuda backend's device words: name, compute capability, driver and runtime",
          "[emulated][faults]") {
    CHECK(cuda_version(13000) == "13.0");
    CHECK(cuda_version(12040) == "12.4");
    CHECK(cuda_version(0) == "none");
    CHECK(describe_cuda_device("NVIDIA H100 80GB HBM3", 9, 0, 13000, 12040) ==
          "NVIDIA H100 80GB HBM3 (sm_90, device 0; driver 13.0, runtime 12.4; CUDA events)");
    CHECK(no_kernel_image_reason("Tesla P100", 6, 0, "75-real,90")
              .find("no kernel image for Tesla P100 (sm_60); this build has code for 75-real,90") ==
          0);
}

#if KVSCOPE_HAVE_SHARED
TEST_CASE("kvscope-cli on a faulting device: exit 2 and one line naming the fault",
          "[emulated][faults][cli]") {
    // Every op its own kernel (--op-times): the 7th attention call is in the second decode step.
    const std::vector<std::string> gen = {
        "generate",         "--model", test::stories_model(), "--prompt",      "Once",
        "--max-new-tokens", "3",       "--backend",           "cuda-emulated", "--op-times"};
    {
        ScopedEnv f("KVSCOPE_EMU_FAULT", "attention:7:fault");
        const auto r = test::run_cli(gen);
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("illegal memory access") != std::string::npos);
        CHECK(r.err.find('\n') == r.err.size() - 1);
        CHECK(r.err.find("terminate") == std::string::npos);
    }
    {
        ScopedEnv f("KVSCOPE_EMU_FAULT", "attention:7:fault");
        ScopedEnv s("KVSCOPE_CUDA_SYNC", "1");
        const auto r = test::run_cli(gen);
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("CUDA error in attention (KVSCOPE_CUDA_SYNC=1") != std::string::npos);
    }
    {
        // The fast path, its fused kernels launched one by one (an injected fault is played at a
        // launch, not inside a replayed graph): the third of the first decode step faults.
        std::vector<std::string> fast = gen;
        fast.pop_back();
        ScopedEnv f("KVSCOPE_EMU_FAULT", "fused:3:fault");
        ScopedEnv g("KVSCOPE_CUDA_GRAPHS", "0");
        const auto r = test::run_cli(fast);
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("illegal memory access") != std::string::npos);
        CHECK(r.err.find('\n') == r.err.size() - 1);
    }
}
#endif
