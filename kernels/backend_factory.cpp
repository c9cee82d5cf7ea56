#include "kernels/backend_factory.h"

#include "core/error.h"
#include "kernels/cpu/cpu_backend.h"

namespace kvs {

bool cuda_compiled() { return false; }
std::string cuda_unavailable_reason() { return "this build has no CUDA backend (no nvcc)"; }

BackendChoice make_backend(const std::string& name) {
    if (name == "cpu") return {std::make_unique<CpuBackend>(), "CPU backend (asked for)"};
    if (name == "auto") {
        return {std::make_unique<CpuBackend>(), "CPU backend: " + cuda_unavailable_reason()};
    }
    if (name == "cuda") throw Error("--backend cuda: no CUDA device: " + cuda_unavailable_reason());
    throw Error("unknown backend '" + name + "' (choose auto, cpu or cuda)");
}

}  // namespace kvs
