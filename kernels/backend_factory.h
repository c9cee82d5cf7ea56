#pragma once
// Picks a backend at run time: "cpu", "cuda" (a device must answer), "cuda-emulated" (the CUDA
// kernel bodies run on the CPU), or "auto" (CUDA when a device answers, else the CPU, with why).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/model/backend.h"
#include "kernels/cuda/gemm_precision.h"
#include "kernels/cuda/launch_shapes.h"

namespace kvs {

struct BackendChoice {
    std::unique_ptr<Backend> backend;
    std::string note;  // why this one, e.g. the CUDA error that made "auto" fall back to the CPU
    // What lies behind a short note: the CUDA runtime's words when "auto" found no NVIDIA GPU
    // (shown under --verbose); empty when the note says it all.
    std::string detail;
};

// A GPU backend `auto` may pick: `problem` says why it cannot be used (empty: usable), `make`
// builds it (and may still throw kvs::Error, e.g. a device that became busy).
struct GpuCandidate {
    std::function<std::string()> problem;
    std::function<std::unique_ptr<Backend>()> make;
    // Given the problem: whether the machine has no NVIDIA GPU at all (no driver, no device), so
    // the CPU is the expected choice and not a fault. Null: never.
    std::function<bool(const std::string& problem)> absent = nullptr;
};
// What `--backend auto` does with a candidate: the GPU when its probe passes and it can be built,
// else the CPU backend with the reason in the note: "no NVIDIA GPU found: running on the CPU"
// (the runtime's words in `detail`) when the machine has none, the problem itself when a GPU is
// there and failed. Never throws for a GPU failure.
BackendChoice choose_auto(const GpuCandidate& gpu);

// Throws kvs::Error for an unknown name, or "cuda" when no device answers. "cuda-emulated" works
// in every build, nvcc or not. `cpu_threads` (>= 1) is what the CPU backend computes on (see
// CpuBackend::set_threads); other backends ignore it, and the note says so when it is not 1.
BackendChoice make_backend(const std::string& name, int cpu_threads = 1);
// The names make_backend takes, and them as a sentence ("auto, cpu, cuda or cuda-emulated").
bool is_backend_name(const std::string& name);
std::string backend_choices();
const std::vector<std::string>& backend_names();
// Whether this build has the CUDA backend compiled in.
bool cuda_compiled();
// Whether `problem` (cuda_unavailable_reason's) means there is no NVIDIA GPU here: no device
// answered, or the runtime found no driver and the machine has no NVIDIA driver files
// (/dev/nvidiactl, /proc/driver/nvidia). A GPU whose driver is too old still counts as there.
bool no_nvidia_gpu(const std::string& problem);
// Empty when a CUDA device answers, can be made current, has a kernel image in this build and runs
// a probe kernel on a stream; else the reason (the failing step and the CUDA runtime's words).
std::string cuda_unavailable_reason();
// The block sizes a CUDA backend ("cuda" or "cuda-emulated") launches its kernels with
// (kern::block_variants, for kvscope-cli kernels); false, and nothing changed, for another one.
bool set_block_sizes(Backend& be, const kern::BlockSizes& b);
// --gemm: the precision of the matmuls of more than one row on a GPU (cuBLAS). What runs them on
// `be`, in words: on cuda cuBLAS in that precision (or the tiled kernel and why), on
// cuda-emulated the emulator's own tiled kernel in float32, "" on the CPU.
std::string set_gemm(Backend& be, GemmPrecision p);

}  // namespace kvs
