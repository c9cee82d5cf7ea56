#include "kernels/gpu_step_probe.h"

#include <algorithm>

#include "core/model/model.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/backend_factory.h"
#include "kernels/emu/emulated_cuda_backend.h"

namespace kvs {
namespace {

// A session that decodes greedily past the end token, one timing run per step unless `timed`.
SessionConfig probe_config(bool op_log, bool timed, int steps) {
    SessionConfig c;
    c.capture.op_log = op_log;
    c.stop_at_end_token = false;
    c.max_new_tokens = steps + 1;
    if (!timed) c.timing.runs = 1;
    return c;
}

int room_for(const Model& m, const std::vector<int>& prompt, int steps) {
    return std::max(0, std::min(steps, m.config().seq_len - static_cast<int>(prompt.size()) - 1));
}

double median(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median forward time of `steps` cached decode steps on `be` op by op (and, where the
// backend has them, of the same steps as one graph and fused).
void time_decode(const Model& m, Backend& be, const std::vector<int>& prompt, int steps,
                 double& seconds, double* graph_seconds, double* fused_seconds) {
    Session s(m, be, probe_config(true, true, steps));
    s.set_prompt_tokens(prompt);
    s.step();
    std::vector<double> t, g, f;
    for (int i = 0; i < steps && !s.finished(); ++i) {
        const StepRecord& r = s.step();
        t.push_back(r.forward_seconds);
        if (r.graph_seconds > 0) g.push_back(r.graph_seconds);
        if (r.fused_seconds > 0) f.push_back(r.fused_seconds);
    }
    seconds = median(t);
    if (graph_seconds) *graph_seconds = median(g);
    if (fused_seconds) *fused_seconds = median(f);
}

}  // namespace

GpuStepView probe_gpu_step(const Model& model, const std::vector<int>& prompt, int steps) {
    if (model.is_toy()) throw Error("@gpu: the toy runs on the host, not as kernels; load a model");
    GpuStepView v;
    v.prefill_rows = static_cast<int>(prompt.size());
    const int room = room_for(model, prompt, steps);
    if (room < 2) throw Error("@gpu: the prompt leaves no room in the context for decode steps");
    {
        // Op by op (graphs and the fused kernels off): the prefill, a first decode step that sizes
        // the decode buffers, then the step counted.
        EmulatedCudaBackend be;
        be.set_graphs_on(false);
        be.set_fused_on(false);
        Session s(model, be, probe_config(true, false, 2));
        s.set_prompt_tokens(prompt);
        be.reset_counts();
        s.step();
        v.prefill_launches = be.counts().launches;
        s.step();
        be.reset_counts();
        s.step();
        const LaunchCounts& c = be.counts();
        v.decode_launches = c.launches;
        v.decode_syncs = c.syncs;
        v.decode_copies = c.h2d + c.d2h;
    }
    {
        // As a CUDA Graph of the same kernels: with per-op timing off (and not fused) the runner
        // records the step once and replays it.
        EmulatedCudaBackend be;
        SessionConfig c = probe_config(false, false, 2);
        c.capture.fused = false;
        Session s(model, be, c);
        s.set_prompt_tokens(prompt);
        s.step();
        s.step();
        be.reset_counts();
        s.step();
        v.graph_launches = be.counts().graph_launches;
        v.graph_kernels = be.counts().graph_kernels;
    }
    {
        // Fused (the fast path): the kernels of its one graph launch.
        EmulatedCudaBackend be;
        Session s(model, be, probe_config(false, false, 2));
        s.set_prompt_tokens(prompt);
        s.step();
        s.step();
        be.reset_counts();
        s.step();
        v.fused_kernels = be.counts().graph_kernels + be.counts().launches;
    }
    v.steps = room;
    BackendChoice cpu = make_backend("cpu");
    v.cpu = cpu.backend->device();
    time_decode(model, *cpu.backend, prompt, room, v.cpu_seconds, nullptr, nullptr);
    v.no_device = cuda_unavailable_reason();
    if (v.no_device.empty()) {
        BackendChoice gpu = make_backend("cuda");
        v.device = gpu.backend->device();
        time_decode(model, *gpu.backend, prompt, room, v.device_seconds, &v.graph_seconds,
                    &v.fused_seconds);
    }
    return v;
}

}  // namespace kvs
