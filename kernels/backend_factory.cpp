#include "kernels/backend_factory.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/emu/emulated_cuda_backend.h"
#if KVSCOPE_HAVE_CUDA
#include "kernels/cuda/cuda_entry.h"
#endif

namespace kvs {

#if KVSCOPE_HAVE_CUDA
bool cuda_compiled() {
    return true;
}
std::string cuda_unavailable_reason() {
    return cuda_device_problem();
}
#else
bool cuda_compiled() {
    return false;
}
std::string cuda_unavailable_reason() {
    return "this build has no CUDA backend (nvcc was not found when it was configured)";
}
#endif

bool no_nvidia_gpu(const std::string& problem) {
    if (problem == "no CUDA device found" ||
        problem.find("no CUDA-capable device is detected") != std::string::npos)
        return true;
    std::error_code ec;
    const bool driver = std::filesystem::exists("/dev/nvidiactl", ec) ||
                        std::filesystem::exists("/proc/driver/nvidia/version", ec);
    return !driver;
}

bool set_block_sizes(Backend& be, const kern::BlockSizes& b) {
    if (auto* emu = dynamic_cast<EmulatedCudaBackend*>(&be)) {
        emu->set_block_sizes(b);
        return true;
    }
#if KVSCOPE_HAVE_CUDA
    return set_cuda_block_sizes(be, b);
#else
    return false;
#endif
}

std::string set_gemm(Backend& be, GemmPrecision p) {
    if (dynamic_cast<EmulatedCudaBackend*>(&be))
        return std::string(
                   "matmuls of more than one row: the emulator's tiled kernel in float32 "
                   "(--gemm ") +
               gemm_precision_name(p) + " applies on a GPU)";
#if KVSCOPE_HAVE_CUDA
    if (set_cuda_gemm(be, p)) return cuda_gemm_note(be);
#endif
    (void)p;
    return {};
}

namespace {

std::unique_ptr<Backend> cuda_backend() {
#if KVSCOPE_HAVE_CUDA
    return make_cuda_backend();
#else
    return nullptr;  // not reached: cuda_unavailable_reason() is never empty here
#endif
}

}  // namespace

BackendChoice choose_auto(const GpuCandidate& gpu) {
#ifdef __EMSCRIPTEN__
    // The web page: WebAssembly runs on the CPU, and a browser offers no CUDA device to look for.
    (void)gpu;
    return {std::make_unique<CpuBackend>(), "CPU backend (a web page has no CUDA)", {}};
#else
    const std::string why = gpu.problem();
    if (why.empty()) {
        try {
            return {gpu.make(), "CUDA backend (a CUDA device answered)", {}};
        } catch (const Error& e) {
            return {
                std::make_unique<CpuBackend>(),
                std::string("CPU backend: the CUDA device could not be set up (") + e.what() + ")",
                {}};
        }
    }
    if (gpu.absent && gpu.absent(why))
        return {std::make_unique<CpuBackend>(), "no NVIDIA GPU found: running on the CPU", why};
    return {std::make_unique<CpuBackend>(), "CPU backend: no usable CUDA device (" + why + ")", {}};
#endif
}

namespace {

BackendChoice choose(const std::string& name) {
    if (name == "cpu") return {std::make_unique<CpuBackend>(), "CPU backend (asked for)", {}};
    if (name == "cuda-emulated")
        return {std::make_unique<EmulatedCudaBackend>(),
                "CUDA kernels emulated on the CPU (asked for)",
                {}};
    if (name == "auto") return choose_auto({cuda_unavailable_reason, cuda_backend, no_nvidia_gpu});
    if (name == "cuda") {
        const std::string why = cuda_unavailable_reason();
        if (!why.empty()) throw Error("--backend cuda: no usable CUDA device (" + why + ")");
        return {cuda_backend(), "CUDA backend (asked for)", {}};
    }
    throw Error("unknown backend '" + name + "' (choose " + backend_choices() + ")");
}

}  // namespace

const std::vector<std::string>& backend_names() {
    static const std::vector<std::string> names = {"auto", "cpu", "cuda", "cuda-emulated"};
    return names;
}

bool is_backend_name(const std::string& name) {
    const auto& n = backend_names();
    return std::find(n.begin(), n.end(), name) != n.end();
}

std::string backend_choices() {
    return "auto, cpu, cuda or cuda-emulated";
}

BackendChoice make_backend(const std::string& name, int cpu_threads) {
    BackendChoice c = choose(name);
    if (auto* cpu = dynamic_cast<CpuBackend*>(c.backend.get()))
        cpu->set_threads(cpu_threads);
    else if (cpu_threads != 1)
        c.note += "; --threads " + std::to_string(cpu_threads) + " applies to the CPU backend only";
    return c;
}

}  // namespace kvs
