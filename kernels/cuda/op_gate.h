#pragma once
// Whether the cuda backend may hold its stream behind the op-timing gate (cuda_backend.cu): a gate
// kernel spins on a flag in mapped host memory while the host queues a step's ops, so that CUDA
// events time the kernels running back to back. It stalls (until its 2 s timeout) wherever a call
// the host makes while it holds the stream waits for the device:
// - lazy module loading (CUDA's default since 12.2): the first launch of a kernel not loaded yet
//   (one warm_up did not launch, cuBLAS's) may wait for the context; so the gate is used only with
//   CUDA_MODULE_LOADING=EAGER;
// - a tool injected into the process (compute-sanitizer, Nsight: CUDA_INJECTION64_PATH), under
//   which a launch may wait for the kernel before it;
// - KVSCOPE_CUDA_GATE=0 turns it off.
// Host C++ only, so the tests check the rule without a device.
#include <string>

namespace kvs {

struct GateEnvironment {
    std::string module_loading;  // CUDA_MODULE_LOADING, as set (empty: CUDA's default, lazy)
    bool tool_injected = false;  // CUDA_INJECTION64_PATH set
    bool turned_off = false;     // KVSCOPE_CUDA_GATE=0
};

GateEnvironment gate_environment();  // read from this process's environment

// Empty when the gate may be used; else why not, in words.
std::string op_gate_refusal(const GateEnvironment& env);

}  // namespace kvs
