#include "kernels/cuda/device_info.h"

namespace kvs {

std::string cuda_version(int v) {
    if (v <= 0) return "none";
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string describe_cuda_device(const std::string& name, int major, int minor, int driver,
                                 int runtime) {
    return name + " (sm_" + std::to_string(major) + std::to_string(minor) + ", device 0; driver " +
           cuda_version(driver) + ", runtime " + cuda_version(runtime) + "; CUDA events)";
}

std::string no_kernel_image_reason(const std::string& name, int major, int minor,
                                   const std::string& built_for) {
    return "no kernel image for " + name + " (sm_" + std::to_string(major) + std::to_string(minor) +
           "); this build has code for " + built_for +
           " (rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(major) +
           std::to_string(minor) + ")";
}

}  // namespace kvs
