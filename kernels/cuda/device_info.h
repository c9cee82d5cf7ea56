#pragma once
// The words the cuda backend uses for its device (Backend::device()) and for a GPU it cannot use.
// Host C++: the numbers come from the CUDA runtime in cuda_backend.cu, the tests pass their own.
#include <string>

namespace kvs {

// CUDA's version integers (1000 * major + 10 * minor, e.g. 12040) as "12.4".
std::string cuda_version(int v);
// "NVIDIA H100 80GB HBM3 (sm_90, device 0; driver 13.0, runtime 13.0; CUDA events)"
std::string describe_cuda_device(const std::string& name, int major, int minor, int driver,
                                 int runtime);
// Why a GPU without code for it in this build cannot run the kernels.
std::string no_kernel_image_reason(const std::string& name, int major, int minor,
                                   const std::string& built_for);

}  // namespace kvs
