#include "kernels/cuda/op_gate.h"

#include <cstdlib>

namespace kvs {

GateEnvironment gate_environment() {
    GateEnvironment e;
    if (const char* m = std::getenv("CUDA_MODULE_LOADING")) e.module_loading = m;
    const char* tool = std::getenv("CUDA_INJECTION64_PATH");
    e.tool_injected = tool && *tool;
    const char* gate = std::getenv("KVSCOPE_CUDA_GATE");
    e.turned_off = gate && std::string(gate) == "0";
    return e;
}

std::string op_gate_refusal(const GateEnvironment& env) {
    if (env.turned_off) return "KVSCOPE_CUDA_GATE=0";
    if (env.tool_injected)
        return "a tool is injected (CUDA_INJECTION64_PATH): a launch may wait for the kernel "
               "before it";
    if (env.module_loading != "EAGER")
        return "modules load lazily (CUDA_MODULE_LOADING=EAGER enables the gate): a first launch "
               "may wait for the device";
    return {};
}

}  // namespace kvs
