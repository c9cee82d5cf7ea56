#pragma once
// Lesson 11's probe (core/session/gpu_step_view.h): the kernel launches, copies and syncs of a
// prefill and of a cached decode step, op by op and as a CUDA Graph, counted on the emulated
// backend; the decode step's time measured on the CPU backend and, where a CUDA device answers, on
// it.
#include <vector>

#include "core/session/gpu_step_view.h"

namespace kvs {

// `steps` cached decode steps are timed on each backend measured (fewer where the context ends).
GpuStepView probe_gpu_step(const Model& model, const std::vector<int>& prompt, int steps = 16);

}  // namespace kvs
