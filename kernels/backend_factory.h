#pragma once
// Picks a backend at run time: "cpu", "cuda" (a device must answer), "cuda-emulated" (the CUDA
// kernel bodies run on the CPU), or "auto" (CUDA when a device answers, else the CPU, with why).
#include <memory>
#include <string>

#include "core/backend.h"

namespace kvs {

struct BackendChoice {
    std::unique_ptr<Backend> backend;
    std::string note;  // why this one, e.g. the CUDA error that made "auto" fall back to the CPU
};

// Throws kvs::Error for an unknown name, or "cuda" when no device answers. "cuda-emulated" works
// in every build, nvcc or not. `cpu_threads` (>= 1) is what the CPU backend computes on (see
// CpuBackend::set_threads); other backends ignore it, and the note says so when it is not 1.
BackendChoice make_backend(const std::string& name, int cpu_threads = 1);
// Whether this build has the CUDA backend compiled in.
bool cuda_compiled();
// Empty when a CUDA device answers, else the reason (the CUDA runtime's error string).
std::string cuda_unavailable_reason();

}  // namespace kvs
