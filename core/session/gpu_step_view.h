#pragma once
// One decode step of a model as a CUDA device runs it: what the cuda backend asks of the CUDA
// runtime, counted (kernels/gpu_step_probe.h counts it on the emulated backend, which makes the
// cuda backend's runtime calls one for one), and its time, measured where a device answers.
// Lesson 11 reads it; nothing in it is estimated.
#include <functional>
#include <string>
#include <vector>

namespace kvs {

class Model;

struct GpuStepView {
    // Counted (the emulated backend, the whole trace on).
    int prefill_rows = 0;      // the prompt's tokens
    int prefill_launches = 0;  // kernel launches of its prefill, one pass
    int decode_launches = 0;   // kernel launches of one cached decode step, op by op
    int decode_syncs = 0;      // stream syncs of that step
    int decode_copies = 0;     // host<->device copies of that step (both ways)
    int graph_launches = 0;    // the same step as a CUDA Graph: graph launches from the host
    int graph_kernels = 0;     // and the kernels they ran
    // Measured: the median over `steps` cached decode steps of each step's forward time (itself
    // the median of its timing runs). The CPU always; a GPU where one answers.
    int steps = 0;
    std::string cpu;             // the CPU backend, in words
    double cpu_seconds = -1;     // a decode step on the CPU backend
    std::string device;          // the GPU, in words; empty: none answered
    std::string no_device;       // why not, when none answered
    double device_seconds = -1;  // a decode step on the GPU, op by op (-1: not measured)
    double graph_seconds = -1;   // the same step as one graph launch (-1: not measured)
};

// Counts and measures one model's decode step from `prompt` (token ids). Throws kvs::Error.
using GpuProbe = std::function<GpuStepView(const Model& model, const std::vector<int>& prompt)>;

}  // namespace kvs
